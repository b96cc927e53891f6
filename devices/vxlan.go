package devices

import (
	"fmt"

	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// vxlanPort is the IANA VXLAN port; links differ by VNI.
const vxlanPort = 4789

// Vxlan links get VNIs 1..N on port 4789, with vishvananda/netlink's
// defaults (learning off).
var Vxlan = register(&Kind{
	Name: "vxlan", Module: "vxlan", Config: "CONFIG_VXLAN",
	assign: func(l *Link, i int, _ Options) { l.VNI = uint32(i + 1) },
	data: func(l *Link, info *nl.RtAttr) {
		data := info.AddRtAttr(unix.IFLA_INFO_DATA, nil)
		data.AddRtAttr(nl.IFLA_VXLAN_ID, nl.Uint32Attr(l.VNI))
		for _, t := range []int{nl.IFLA_VXLAN_TTL, nl.IFLA_VXLAN_TOS, nl.IFLA_VXLAN_LEARNING,
			nl.IFLA_VXLAN_PROXY, nl.IFLA_VXLAN_RSC, nl.IFLA_VXLAN_L2MISS, nl.IFLA_VXLAN_L3MISS,
			nl.IFLA_VXLAN_UDP_ZERO_CSUM6_TX, nl.IFLA_VXLAN_UDP_ZERO_CSUM6_RX} {
			data.AddRtAttr(t, nl.Uint8Attr(0))
		}
		data.AddRtAttr(nl.IFLA_VXLAN_PORT, []byte{vxlanPort >> 8, vxlanPort & 0xff})
	},
	ipArgs: func(l *Link) string {
		return fmt.Sprintf("id %d dstport %d nolearning", l.VNI, vxlanPort)
	},
})
