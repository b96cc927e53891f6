package devices

import (
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// Macvlan links all sit on one lower device, in bridge mode.
var Macvlan = register(&Kind{
	Name: "macvlan", KernelKiB: 41, Module: "macvlan", Config: "CONFIG_MACVLAN",
	NeedsLower: true,
	data: func(_ *Link, info *nl.RtAttr) {
		data := info.AddRtAttr(unix.IFLA_INFO_DATA, nil)
		data.AddRtAttr(unix.IFLA_MACVLAN_MODE, nl.Uint32Attr(nl.MACVLAN_MODE_BRIDGE))
	},
	ipArgs: func(*Link) string { return "mode bridge" },
})
