package nlbatch

import (
	"encoding/binary"
	"errors"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Fault is a fault the kernel injects into one datagram's requests, as
// syzkaller does: the kernel fails the Nth fault point (an allocation) of
// the system call that sends it (/proc/thread-self/fail-nth, a kernel
// with CONFIG_FAULT_INJECTION).
type Fault struct {
	// Type is the type of the first request of the datagram that carries
	// the fault (unix.RTM_NEWLINK, unix.RTM_DELLINK); N the fault point.
	Type uint16
	N    int
	// Sent says the datagram was sent; Injected that the kernel failed its
	// Nth fault point (false: the request had fewer than N, and ran
	// whole); Err why the fault could not be armed.
	Sent, Injected bool
	Err            error
}

// FailNthPath is where the kernel takes a thread's fault point to fail.
const FailNthPath = "/proc/thread-self/fail-nth"

// ErrNoFaultInjection reports a kernel without fail-nth.
var ErrNoFaultInjection = errors.New("this kernel has no fault injection (" + FailNthPath + ": CONFIG_FAULT_INJECTION)")

// InjectFault arms f for the next datagram whose first request is of type
// f.Type; it is disarmed once that datagram is sent. f is filled in then.
func (c *Conn) InjectFault(f *Fault) { c.fault = f }

// send writes one datagram, with the armed fault when it is the one.
func (c *Conn) send(b []byte) error {
	f := c.fault
	if f == nil || len(b) < 6 || binary.NativeEndian.Uint16(b[4:6]) != f.Type {
		return c.t.Send(b)
	}
	c.fault = nil
	// The kernel runs a netlink request in the sender's system call: the
	// fault is the sending thread's. The file is opened first and read
	// with pread, as the kernel's documentation does: an open after the
	// send would spend the count left in its own allocations.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	fd, err := unix.Open(FailNthPath, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ENOENT) {
			err = ErrNoFaultInjection
		}
		f.Err = err
		return f.send(c.t, b)
	}
	defer unix.Close(fd)
	if _, f.Err = unix.Pwrite(fd, []byte(strconv.Itoa(f.N)), 0); f.Err != nil {
		return f.send(c.t, b)
	}
	err = f.send(c.t, b)
	buf := make([]byte, 16)
	n, rerr := unix.Pread(fd, buf, 0)
	left := 0
	if rerr == nil {
		left, rerr = strconv.Atoi(strings.TrimSpace(string(buf[:n])))
	}
	if rerr == nil && left != 0 {
		_, rerr = unix.Pwrite(fd, []byte("0"), 0) // not reached: disarm, or the thread's next call fails
	}
	f.Injected, f.Err = rerr == nil && left == 0, rerr
	return err
}

func (f *Fault) send(t Transport, b []byte) error {
	err := t.Send(b)
	f.Sent = err == nil
	return err
}
