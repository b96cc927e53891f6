package nlbatch

import (
	"encoding/binary"
	"errors"

	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// fakeKernel stands in for the kernel where the real one cannot be made to
// misbehave on demand: a receive queue of limited size that drops replies
// (and reports ENOBUFS once) when full, as netlink does.
type fakeKernel struct {
	capacity int // replies the receive queue holds
	queue    [][]byte
	overrun  bool
	sends    int
	// answer decides each request's fate: an errno (0: success), the
	// extended-ACK text, and replies to queue before the ACK.
	answer func(seq uint32, req []byte) (errno unix.Errno, msg string, replies [][]byte)
}

var errWouldBlock = errors.New("fake: blocking read on an empty queue")

func (f *fakeKernel) send(b []byte) error {
	f.sends++
	return splitMessages(b, func(h header, msg []byte) error {
		var errno unix.Errno
		var text string
		var replies [][]byte
		if f.answer != nil {
			errno, text, replies = f.answer(h.Seq, msg)
		}
		for _, r := range replies {
			f.push(r)
		}
		if h.Flags&unix.NLM_F_ACK != 0 || errno != 0 {
			f.push(ackMessage(h.Seq, msg, errno, text, 8))
		}
		return nil
	})
}

func (f *fakeKernel) push(m []byte) {
	if len(f.queue) >= f.capacity {
		f.overrun = true
		return
	}
	f.queue = append(f.queue, m)
}

func (f *fakeKernel) recv(b []byte, block bool) (int, error) {
	if f.overrun {
		f.overrun = false
		return 0, unix.ENOBUFS
	}
	if len(f.queue) == 0 {
		if block {
			return 0, errWouldBlock
		}
		return 0, unix.EAGAIN
	}
	m := f.queue[0]
	f.queue = f.queue[1:]
	return copy(b, m), nil
}

func (f *fakeKernel) close() error { return nil }

// ackMessage builds what a kernel with NETLINK_CAP_ACK and NETLINK_EXT_ACK
// answers: the error code, the request's header, and the TLVs.
func ackMessage(seq uint32, req []byte, errno unix.Errno, text string, offset int) []byte {
	payload := make([]byte, 4+unix.NLMSG_HDRLEN)
	binary.NativeEndian.PutUint32(payload, uint32(-int32(errno)))
	copy(payload[4:], req[:unix.NLMSG_HDRLEN])
	flags := uint16(unix.NLM_F_CAPPED)
	if text != "" {
		flags |= unix.NLM_F_ACK_TLVS
		payload = append(payload, nl.NewRtAttr(unix.NLMSGERR_ATTR_MSG, nl.ZeroTerminated(text)).Serialize()...)
		payload = append(payload, nl.NewRtAttr(unix.NLMSGERR_ATTR_OFFS, nl.Uint32Attr(uint32(offset))).Serialize()...)
	}
	return message(unix.NLMSG_ERROR, flags, seq, payload)
}

func message(typ, flags uint16, seq uint32, payload []byte) []byte {
	m := make([]byte, unix.NLMSG_HDRLEN, unix.NLMSG_HDRLEN+len(payload))
	binary.NativeEndian.PutUint32(m[0:4], uint32(unix.NLMSG_HDRLEN+len(payload)))
	binary.NativeEndian.PutUint16(m[4:6], typ)
	binary.NativeEndian.PutUint16(m[6:8], flags)
	binary.NativeEndian.PutUint32(m[8:12], seq)
	return append(m, payload...)
}
