package devices

import (
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// Veth links are pairs: link "P7" has peer "P7p" in the same namespace.
// Deleting either end deletes both in one unregister batch.
var Veth = register(&Kind{
	Name: "veth", KernelKiB: 89, Module: "veth", Config: "CONFIG_VETH", Peers: true,
	assign: func(l *Link, _ int, _ Options) { l.Peer = l.Name + "p" },
	data: func(l *Link, info *nl.RtAttr) {
		data := info.AddRtAttr(unix.IFLA_INFO_DATA, nil)
		peer := data.AddRtAttr(nl.VETH_INFO_PEER, nil)
		nl.NewIfInfomsgChild(peer, unix.AF_UNSPEC)
		peer.AddRtAttr(unix.IFLA_IFNAME, nl.ZeroTerminated(l.Peer))
		if l.PeerNetns > 0 {
			peer.AddRtAttr(unix.IFLA_NET_NS_FD, nl.Uint32Attr(uint32(l.PeerNetns)))
		}
	},
	ipArgs: func(l *Link) string { return "peer name " + l.Peer },
})
