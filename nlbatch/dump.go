package nlbatch

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// MaxDumpAttempts bounds the attempts at a dump the kernel keeps flagging
// as inconsistent because the table changes under it.
const MaxDumpAttempts = 10

// ErrDumpInconsistent is returned when every attempt at a dump came back
// flagged NLM_F_DUMP_INTR.
var ErrDumpInconsistent = errors.New("netlink dump interrupted by concurrent changes on every attempt")

// Dump runs a dump request (NLM_F_DUMP is added). The kernel flags a dump
// NLM_F_DUMP_INTR when the table changed while it was being read; Dump then
// starts over, calling restart before each attempt, so only the messages of
// the last, consistent attempt count. msg points into the Conn's buffer: copy
// what you keep, and do not use the Conn from each.
func (c *Conn) Dump(req []byte, restart func(), each func(msg []byte) error) error {
	for attempt := 0; attempt < MaxDumpAttempts; attempt++ {
		restart()
		intr, err := c.dumpOnce(req, each)
		if err != nil {
			return err
		}
		if !intr {
			return nil
		}
	}
	return ErrDumpInconsistent
}

func (c *Conn) dumpOnce(req []byte, each func(msg []byte) error) (intr bool, err error) {
	seq := c.nextSeq()
	if err := stamp(req, seq, unix.NLM_F_DUMP); err != nil {
		return false, err
	}
	if err := c.send(req); err != nil {
		return false, fmt.Errorf("sendmsg: %w", err)
	}
	buf := c.buf[:cap(c.buf)]
	var failed error // the first error of the dump, returned once it is over
	for {
		n, err := c.t.Recv(buf, true)
		if errors.Is(err, unix.ENOBUFS) {
			// Part of the dump was dropped: drain it and try again.
			c.discard()
			return true, nil
		}
		if err != nil {
			return false, fmt.Errorf("recvmsg: %w", err)
		}
		// After an error, read on to the end of the dump, so the socket
		// is clean for the next request.
		done := false
		perr := splitMessages(buf[:n], func(h header, msg []byte) error {
			if h.Seq != seq || done {
				return nil
			}
			if h.Flags&unix.NLM_F_DUMP_INTR != 0 {
				intr = true
			}
			switch h.Type {
			case unix.NLMSG_DONE:
				done = true
			case unix.NLMSG_ERROR:
				done = true
				if failed == nil {
					failed = parseAck(h.Flags, msg[unix.NLMSG_HDRLEN:])
				}
			default:
				if failed == nil {
					failed = each(msg)
				}
			}
			return nil
		})
		if perr != nil {
			return intr, fmt.Errorf("recvmsg: %w", perr)
		}
		if done {
			return intr, failed
		}
	}
}

// discard empties the receive queue.
func (c *Conn) discard() {
	buf := c.buf[:cap(c.buf)]
	for {
		if _, err := c.t.Recv(buf, false); err != nil && !errors.Is(err, unix.ENOBUFS) {
			return
		}
	}
}
