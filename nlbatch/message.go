package nlbatch

import (
	"encoding/binary"
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/devbulk/devbulk/nlbatch/internal/nlwire"
)

var errShort = errors.New("netlink: truncated message")

// header is the decoded nlmsghdr of a message.
type header struct {
	Len   uint32
	Type  uint16
	Flags uint16
	Seq   uint32
}

// splitMessages calls fn for each netlink message in a datagram.
func splitMessages(b []byte, fn func(h header, msg []byte) error) error {
	for len(b) > 0 {
		if len(b) < unix.NLMSG_HDRLEN {
			return errShort
		}
		h := header{
			Len:   binary.NativeEndian.Uint32(b[0:4]),
			Type:  binary.NativeEndian.Uint16(b[4:6]),
			Flags: binary.NativeEndian.Uint16(b[6:8]),
			Seq:   binary.NativeEndian.Uint32(b[8:12]),
		}
		if h.Len < unix.NLMSG_HDRLEN || int(h.Len) > len(b) {
			return errShort
		}
		if err := fn(h, b[:h.Len]); err != nil {
			return err
		}
		next := nlwire.Align4(int(h.Len))
		if next > len(b) {
			next = len(b)
		}
		b = b[next:]
	}
	return nil
}

// stamp prepares a serialized request for sending: sequence number,
// nlmsg_pid 0 (the kernel fills in the sender's port), NLM_F_REQUEST and the
// given flags.
func stamp(req []byte, seq uint32, flags uint16) error {
	if len(req) < unix.NLMSG_HDRLEN || int(binary.NativeEndian.Uint32(req[0:4])) != len(req) {
		return errors.New("nlbatch: request is not one serialized netlink message (nlmsg_len must equal its length)")
	}
	flags |= binary.NativeEndian.Uint16(req[6:8]) | unix.NLM_F_REQUEST
	binary.NativeEndian.PutUint16(req[6:8], flags)
	binary.NativeEndian.PutUint32(req[8:12], seq)
	binary.NativeEndian.PutUint32(req[12:16], 0)
	return nil
}

// maxErrno is the largest errno the kernel sends (MAX_ERRNO).
const maxErrno = 4095

// parseAck decodes the payload of an NLMSG_ERROR message (everything after its
// own nlmsghdr). It returns nil for a plain ACK and *Error otherwise.
// flags are the NLMSG_ERROR message's own nlmsg_flags.
func parseAck(flags uint16, payload []byte) error {
	if len(payload) < 4 {
		return errShort
	}
	code := int32(binary.NativeEndian.Uint32(payload[0:4]))
	if code == 0 {
		return nil
	}
	if code > 0 || code < -maxErrno {
		return fmt.Errorf("%w: error code %d is not a negative errno", errShort, code)
	}
	e := &Error{Errno: unix.Errno(-code), Offset: -1}
	if flags&unix.NLM_F_ACK_TLVS == 0 {
		return e
	}
	// After the error code comes the original request's header, and its
	// payload too unless the kernel capped it (NETLINK_CAP_ACK).
	rest := payload[4:]
	if len(rest) < unix.NLMSG_HDRLEN {
		return e
	}
	reqLen := int(binary.NativeEndian.Uint32(rest[0:4])) // the request's nlmsg_len
	skip := unix.NLMSG_HDRLEN
	if flags&unix.NLM_F_CAPPED == 0 {
		skip = nlwire.Align4(reqLen)
	}
	if skip > len(rest) || skip < unix.NLMSG_HDRLEN {
		return e
	}
	nlwire.ForEachAttr(rest[skip:], func(typ uint16, v []byte) {
		switch typ {
		case unix.NLMSGERR_ATTR_MSG:
			e.Message = nlwire.CString(v)
		case unix.NLMSGERR_ATTR_OFFS:
			// An offset outside the request says nothing: drop it.
			if len(v) >= 4 {
				if off := int(binary.NativeEndian.Uint32(v)); off >= unix.NLMSG_HDRLEN && off < reqLen {
					e.Offset = off
				}
			}
		}
	})
	return e
}
