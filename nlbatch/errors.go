package nlbatch

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// ErrAckLost reports that a request was sent but its ACK never arrived because
// the socket's receive buffer overflowed. The kernel executed the request; its
// outcome is unknown until the caller looks the object up.
var ErrAckLost = errors.New("netlink ACK lost (receive buffer overrun): outcome unknown")

// Error is a kernel error ACK for one request.
type Error struct {
	Errno unix.Errno
	// Message is the kernel's extended-ACK text (NLMSGERR_ATTR_MSG), if any.
	Message string
	// Offset is the byte offset, in the request, of the attribute the kernel
	// rejected (NLMSGERR_ATTR_OFFS), or -1 when the kernel did not say.
	Offset int
}

func (e *Error) Error() string {
	s := e.Errno.Error()
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.Offset >= 0 {
		s += fmt.Sprintf(" (attribute at offset %d)", e.Offset)
	}
	return s
}

// Unwrap lets errors.Is(err, unix.EEXIST) and the like work.
func (e *Error) Unwrap() error { return e.Errno }
