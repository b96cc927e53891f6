package nlbatch

import (
	"encoding/binary"
	"maps"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/devbulk/devbulk/nlbatch/internal/nlwire"
)

// The move requests are RTM_NEWLINKs without NLM_F_CREATE (the links must
// exist): one link's by its ifindex, a group's with ifindex 0 and
// IFLA_GROUP (rtnl_group_changelink); both carry the destination's fd in
// IFLA_NET_NS_FD, and nothing else.
func TestMoveRequests(t *testing.T) {
	h := binary.NativeEndian
	for _, tc := range []struct {
		name  string
		msg   []byte
		index int32
		attrs map[uint16]uint32
	}{
		{"one link", SetNetnsRequest(42, 7), 42, map[uint16]uint32{unix.IFLA_NET_NS_FD: 7}},
		{"a group", SetGroupNetnsRequest(9, 7), 0, map[uint16]uint32{unix.IFLA_GROUP: 9, unix.IFLA_NET_NS_FD: 7}},
	} {
		msg := tc.msg
		if typ, flags := h.Uint16(msg[4:6]), h.Uint16(msg[6:8]); typ != unix.RTM_NEWLINK || flags&unix.NLM_F_CREATE != 0 {
			t.Errorf("%s: type %d, flags %#x", tc.name, typ, flags)
		}
		body := msg[unix.NLMSG_HDRLEN:]
		if index := int32(h.Uint32(body[4:8])); index != tc.index {
			t.Errorf("%s: ifindex %d, want %d", tc.name, index, tc.index)
		}
		attrs := map[uint16]uint32{}
		nlwire.ForEachAttr(body[unix.SizeofIfInfomsg:], func(typ uint16, v []byte) { attrs[typ] = h.Uint32(v) })
		if !maps.Equal(attrs, tc.attrs) {
			t.Errorf("%s: attributes %v, want %v", tc.name, attrs, tc.attrs)
		}
	}
}
