package devices

import (
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// Ipip tunnels get distinct remotes (see nthRemote): tunnels sharing
// endpoints collide (EEXIST) and crowd one hash bucket.
var Ipip = register(&Kind{
	Name: "ipip", KernelKiB: 47, Module: "ipip", Config: "CONFIG_NET_IPIP", Remotes: true,
	Fallback: []string{"tunl0"},
	MaxCount: maxTunnels,
	check:    checkRemotes,
	assign:   func(l *Link, i int, o Options) { l.Remote = nthRemote(o, i) },
	data: func(l *Link, info *nl.RtAttr) {
		data := info.AddRtAttr(unix.IFLA_INFO_DATA, nil)
		remote := l.Remote.As4()
		data.AddRtAttr(nl.IFLA_IPTUN_REMOTE, remote[:])
		data.AddRtAttr(nl.IFLA_IPTUN_PMTUDISC, nl.Uint8Attr(1))
		data.AddRtAttr(nl.IFLA_IPTUN_TTL, nl.Uint8Attr(0))
		data.AddRtAttr(nl.IFLA_IPTUN_TOS, nl.Uint8Attr(0))
		zeroEncap(data, nl.IFLA_IPTUN_ENCAP_TYPE)
		data.AddRtAttr(nl.IFLA_IPTUN_PROTO, nl.Uint8Attr(0))
	},
	ipArgs: func(l *Link) string { return "remote " + l.Remote.String() + " pmtudisc" },
})

// maxTunnels is the number of remotes in 198.18.0.1..198.19.255.254.
const maxTunnels = 1<<17 - 2

// zeroEncap adds the four encapsulation attributes LinkAdd always sends
// (type, flags, sport, dport: all zero), numbered consecutively from first.
func zeroEncap(data *nl.RtAttr, first int) {
	for t := first; t < first+4; t++ {
		data.AddRtAttr(t, nl.Uint16Attr(0))
	}
}
