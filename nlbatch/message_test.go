package nlbatch

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

func TestParseAck(t *testing.T) {
	req := DelLinkRequest(3)
	uncapped := func() []byte {
		// Without NETLINK_CAP_ACK the whole request is echoed before the TLVs.
		p := make([]byte, 4)
		code := -int32(unix.ENODEV)
		binary.NativeEndian.PutUint32(p, uint32(code))
		p = append(p, req...)
		return append(p, nl.NewRtAttr(unix.NLMSGERR_ATTR_MSG, nl.ZeroTerminated("no such device")).Serialize()...)
	}()
	cases := []struct {
		name    string
		flags   uint16
		payload []byte
		errno   unix.Errno
		msg     string
		offset  int
	}{
		{"ack", 0, ackMessage(1, req, 0, "", 0)[16:], 0, "", -1},
		{"bare error", unix.NLM_F_CAPPED, ackMessage(1, req, unix.EPERM, "", 0)[16:], unix.EPERM, "", -1},
		{"ext ack", unix.NLM_F_CAPPED | unix.NLM_F_ACK_TLVS, ackMessage(1, req, unix.EINVAL, "unknown kind", 36)[16:], unix.EINVAL, "unknown kind", 36},
		{"uncapped", unix.NLM_F_ACK_TLVS, uncapped, unix.ENODEV, "no such device", -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := parseAck(c.flags, c.payload)
			if c.errno == 0 {
				if err != nil {
					t.Fatalf("ack parsed as %v", err)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("got %v, want *Error", err)
			}
			if e.Errno != c.errno || e.Message != c.msg || e.Offset != c.offset {
				t.Errorf("got %+v, want errno %v msg %q offset %d", *e, c.errno, c.msg, c.offset)
			}
		})
	}
	if err := parseAck(0, []byte{1, 2}); err == nil {
		t.Error("a 2-byte payload parsed")
	}
}

func TestErrorText(t *testing.T) {
	e := &Error{Errno: unix.EEXIST, Message: "duplicate", Offset: 40}
	if got, want := e.Error(), "file exists: duplicate (attribute at offset 40)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// FuzzParseAck feeds arbitrary datagrams through the reply parsers: whatever
// the kernel (or a corrupted buffer) sends, they must not panic or read past
// the datagram, and an error ACK must decode to *Error.
func FuzzParseAck(f *testing.F) {
	req := DelLinkRequest(3)
	f.Add(ackMessage(1, req, unix.EEXIST, "exists", 20))
	f.Add(ackMessage(1, req, 0, "", 0))
	f.Add([]byte{20, 0, 0, 0, 2, 0, 0, 2, 1, 0, 0, 0, 0, 0, 0, 0, 255, 255, 255, 255})
	f.Fuzz(func(t *testing.T, b []byte) {
		_ = splitMessages(b, func(h header, msg []byte) error {
			if h.Type != unix.NLMSG_ERROR {
				_, _ = ParseLink(msg)
				return nil
			}
			payload := msg[unix.NLMSG_HDRLEN:]
			err := parseAck(h.Flags, payload)
			var e *Error
			if len(payload) >= 4 && binary.NativeEndian.Uint32(payload) != 0 && !errors.As(err, &e) {
				t.Errorf("error ACK %x decoded as %v", msg, err)
			}
			return nil
		})
	})
}
