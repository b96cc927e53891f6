package nlbatch

import (
	"encoding/binary"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/devbulk/devbulk/nlbatch/internal/nlwire"
)

// The move request is an RTM_NEWLINK for the link's ifindex with the
// destination namespace's fd in IFLA_NET_NS_FD, and nothing else (no
// NLM_F_CREATE: the link must exist).
func TestSetNetnsRequest(t *testing.T) {
	msg := SetNetnsRequest(42, 7)
	h := binary.NativeEndian
	if typ, flags := h.Uint16(msg[4:6]), h.Uint16(msg[6:8]); typ != unix.RTM_NEWLINK || flags&unix.NLM_F_CREATE != 0 {
		t.Errorf("type %d, flags %#x", typ, flags)
	}
	body := msg[unix.NLMSG_HDRLEN:]
	if index := int32(h.Uint32(body[4:8])); index != 42 {
		t.Errorf("ifindex %d", index)
	}
	attrs := map[uint16][]byte{}
	nlwire.ForEachAttr(body[unix.SizeofIfInfomsg:], func(typ uint16, v []byte) { attrs[typ] = v })
	if fd, ok := attrs[unix.IFLA_NET_NS_FD]; len(attrs) != 1 || !ok || h.Uint32(fd) != 7 {
		t.Errorf("attributes %v", attrs)
	}
}

// The group move is an RTM_NEWLINK for ifindex 0 with the group and the
// destination's fd, and no NLM_F_CREATE (rtnl_group_changelink).
func TestSetGroupNetnsRequest(t *testing.T) {
	msg := SetGroupNetnsRequest(9, 7)
	h := binary.NativeEndian
	if typ, flags := h.Uint16(msg[4:6]), h.Uint16(msg[6:8]); typ != unix.RTM_NEWLINK || flags&unix.NLM_F_CREATE != 0 {
		t.Errorf("type %d, flags %#x", typ, flags)
	}
	body := msg[unix.NLMSG_HDRLEN:]
	if index := int32(h.Uint32(body[4:8])); index != 0 {
		t.Errorf("ifindex %d", index)
	}
	attrs := map[uint16][]byte{}
	nlwire.ForEachAttr(body[unix.SizeofIfInfomsg:], func(typ uint16, v []byte) { attrs[typ] = v })
	if len(attrs) != 2 || h.Uint32(attrs[unix.IFLA_GROUP]) != 9 || h.Uint32(attrs[unix.IFLA_NET_NS_FD]) != 7 {
		t.Errorf("attributes %v", attrs)
	}
}
