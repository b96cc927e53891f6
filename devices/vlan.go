package devices

import (
	"encoding/binary"
	"fmt"

	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// MaxVlanID is the highest usable 802.1Q/802.1ad id; ids run 1..4094 on
// each lower device, so larger runs spread over several lowers.
const MaxVlanID = 4094

// Vlan links get ids 1..4094 on each lower device, in order.
var Vlan = register(&Kind{
	Name: "vlan", KernelKiB: 46, Module: "8021q", Config: "CONFIG_VLAN_8021Q", VlanProtos: true,
	NeedsLower: true, PerLower: MaxVlanID,
	assign: func(l *Link, i int, o Options) {
		l.VlanID = uint16(1 + i%MaxVlanID)
		l.VlanProto, _ = vlanProto(o.VlanProto)
	},
	data: func(l *Link, info *nl.RtAttr) {
		data := info.AddRtAttr(unix.IFLA_INFO_DATA, nil)
		data.AddRtAttr(unix.IFLA_VLAN_ID, nl.Uint16Attr(l.VlanID))
		data.AddRtAttr(unix.IFLA_VLAN_FLAGS, make([]byte, 8)) // flags 0, mask 0: kernel defaults
		proto := make([]byte, 2)
		binary.BigEndian.PutUint16(proto, l.VlanProto)
		data.AddRtAttr(unix.IFLA_VLAN_PROTOCOL, proto)
	},
	ipArgs: func(l *Link) string {
		name := "802.1Q"
		if l.VlanProto == unix.ETH_P_8021AD {
			name = "802.1ad"
		}
		return fmt.Sprintf("id %d protocol %s", l.VlanID, name)
	},
})

// vlanProto maps the --vlan-proto spelling to its ethertype.
func vlanProto(s string) (uint16, error) {
	switch s {
	case "", "802.1Q", "802.1q":
		return unix.ETH_P_8021Q, nil
	case "802.1ad", "802.1AD":
		return unix.ETH_P_8021AD, nil
	}
	return 0, fmt.Errorf("vlan protocol %q: valid are 802.1Q and 802.1ad", s)
}
