package nlbatch

import (
	"context"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"

	"github.com/devbulk/devbulk/nlbatch/nlbatchtest"
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
		{"ack", 0, nlbatchtest.Ack(1, req, 0, "", 0)[16:], 0, "", -1},
		{"bare error", unix.NLM_F_CAPPED, nlbatchtest.Ack(1, req, unix.EPERM, "", 0)[16:], unix.EPERM, "", -1},
		{"ext ack", unix.NLM_F_CAPPED | unix.NLM_F_ACK_TLVS, nlbatchtest.Ack(1, req, unix.EINVAL, "unknown kind", 16)[16:], unix.EINVAL, "unknown kind", 16},
		{"offset outside the request", unix.NLM_F_CAPPED | unix.NLM_F_ACK_TLVS, nlbatchtest.Ack(1, req, unix.EINVAL, "unknown kind", 36)[16:], unix.EINVAL, "unknown kind", -1},
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
// the kernel (or a corrupted buffer) sends, they must not panic, and what
// they return must make sense: an error ACK decodes to *Error with an errno
// the kernel can send, text without NUL, and an offset inside the request
// (or none).
func FuzzParseAck(f *testing.F) {
	req := DelLinkRequest(3)
	f.Add(nlbatchtest.Ack(1, req, unix.EEXIST, "exists", 20))
	f.Add(nlbatchtest.Ack(1, req, 0, "", 0))
	f.Add([]byte{20, 0, 0, 0, 2, 0, 0, 2, 1, 0, 0, 0, 0, 0, 0, 0, 255, 255, 255, 255})
	f.Fuzz(func(t *testing.T, b []byte) {
		_ = splitMessages(b, func(h header, msg []byte) error {
			if h.Type != unix.NLMSG_ERROR {
				_, _ = ParseLink(msg)
				return nil
			}
			payload := msg[unix.NLMSG_HDRLEN:]
			err := parseAck(h.Flags, payload)
			if len(payload) < 4 || binary.NativeEndian.Uint32(payload) == 0 {
				if err == nil && len(payload) < 4 {
					t.Fatalf("short ACK %x decoded as success", msg)
				}
				return nil
			}
			var e *Error
			if !errors.As(err, &e) {
				if err == nil {
					t.Fatalf("error ACK %x decoded as success", msg)
				}
				return nil // a code no kernel sends: refused
			}
			reqLen := -1
			if len(payload) >= 8 {
				reqLen = int(binary.NativeEndian.Uint32(payload[4:8]))
			}
			switch {
			case e.Errno <= 0 || e.Errno > maxErrno:
				t.Fatalf("errno %d out of range from %x", e.Errno, msg)
			case strings.ContainsRune(e.Message, 0):
				t.Fatalf("message %q holds NUL", e.Message)
			case e.Offset != -1 && (e.Offset < unix.NLMSG_HDRLEN || e.Offset >= reqLen):
				t.Fatalf("offset %d outside the %d-byte request", e.Offset, reqLen)
			}
			return nil
		})
	})
}

// FuzzAckRoundTrip: what the fake kernel encodes as an error ACK, the
// parser reads back exactly.
func FuzzAckRoundTrip(f *testing.F) {
	f.Add(uint16(17), "Interface name already exists", uint16(24))
	f.Add(uint16(1), "", uint16(0))
	f.Fuzz(func(t *testing.T, errno uint16, text string, offset uint16) {
		if errno == 0 || errno > maxErrno || strings.ContainsRune(text, 0) {
			return
		}
		req := DelLinkRequest(3)
		err := parseAck(unix.NLM_F_CAPPED|unix.NLM_F_ACK_TLVS, nlbatchtest.Ack(1, req, unix.Errno(errno), text, int(offset))[unix.NLMSG_HDRLEN:])
		var e *Error
		if !errors.As(err, &e) || e.Errno != unix.Errno(errno) {
			t.Fatalf("errno %d came back as %v", errno, err)
		}
		wantOff := -1
		if text != "" && int(offset) >= unix.NLMSG_HDRLEN && int(offset) < len(req) {
			wantOff = int(offset)
		}
		if text != "" && e.Message != text || e.Offset != wantOff {
			t.Fatalf("(%q, %d) came back as (%q, %d)", text, offset, e.Message, e.Offset)
		}
	})
}

// replay is a transport whose kernel answers every datagram with the same
// bytes, whatever was asked: corrupted, foreign or truncated replies.
type replay struct {
	reply []byte
	sent  bool
}

func (r *replay) Send([]byte) error { r.sent = true; return nil }
func (r *replay) Recv(b []byte, block bool) (int, error) {
	if !r.sent {
		if block {
			return 0, nlbatchtest.ErrWouldBlock
		}
		return 0, unix.EAGAIN
	}
	r.sent = false
	return copy(b, r.reply), nil
}
func (r *replay) Close() error { return nil }

// FuzzReplies feeds arbitrary reply datagrams to Execute and Dump as the
// kernel's answer: they must not panic or hang, Execute must give one
// result per request and never call success what no ACK confirmed, and a
// dump must end.
func FuzzReplies(f *testing.F) {
	req := DelLinkRequest(3)
	f.Add(nlbatchtest.Ack(1, req, 0, "", 0))
	f.Add(nlbatchtest.Ack(1, req, unix.ENODEV, "no such device", 16))
	f.Add(append(nlbatchtest.LinkMessage(1, unix.NLM_F_MULTI, nlbatchtest.Link{Index: 1, Name: "lo"}),
		nlbatchtest.Message(unix.NLMSG_DONE, unix.NLM_F_MULTI, 1, make([]byte, 4))...))
	f.Fuzz(func(t *testing.T, b []byte) {
		c := NewConn(&replay{reply: b}, 1<<20, 1<<20)
		res, _, err := c.Execute(context.Background(), [][]byte{DelLinkRequest(3), DelLinkRequest(4)}, 0)
		if err == nil {
			if len(res) != 2 {
				t.Fatalf("%d results for 2 requests", len(res))
			}
			acked := 0
			splitMessages(b, func(h header, msg []byte) error {
				if h.Type == unix.NLMSG_ERROR && len(msg) >= unix.NLMSG_HDRLEN+4 && binary.NativeEndian.Uint32(msg[unix.NLMSG_HDRLEN:]) == 0 {
					acked++
				}
				return nil
			})
			for _, r := range res {
				if r.Err == nil && acked == 0 {
					t.Fatalf("success without an ACK in %x", b)
				}
			}
		}
		c = NewConn(&replay{reply: b}, 1<<20, 1<<20)
		_, _ = c.Links()
	})
}
