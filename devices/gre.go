package devices

import (
	"net/netip"

	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// Gre and Gretap tunnels: unkeyed, local any, distinct remotes.
var (
	Gre    = register(greKind("gre", []string{"gre0"}))
	Gretap = register(greKind("gretap", []string{"gretap0", "erspan0"}))
)

func greKind(name string, fallback []string) *Kind {
	return &Kind{
		Name: name, Module: "ip_gre", Config: "CONFIG_NET_IPGRE", Remotes: true,
		KernelKiB: 47, // gre's, measured; gretap's taken to be the same
		Fallback:  fallback,
		MaxCount:  maxTunnels,
		check:     checkRemotes,
		assign:    func(l *Link, i int, o Options) { l.Remote = nthRemote(o, i) },
		data: func(l *Link, info *nl.RtAttr) {
			data := info.AddRtAttr(unix.IFLA_INFO_DATA, nil)
			local, remote := netip.IPv4Unspecified().As4(), l.Remote.As4()
			data.AddRtAttr(nl.IFLA_GRE_LOCAL, local[:])
			data.AddRtAttr(nl.IFLA_GRE_REMOTE, remote[:])
			data.AddRtAttr(nl.IFLA_GRE_IFLAGS, []byte{0, 0})
			data.AddRtAttr(nl.IFLA_GRE_OFLAGS, []byte{0, 0})
			data.AddRtAttr(nl.IFLA_GRE_PMTUDISC, nl.Uint8Attr(1))
			data.AddRtAttr(nl.IFLA_GRE_TTL, nl.Uint8Attr(0))
			data.AddRtAttr(nl.IFLA_GRE_TOS, nl.Uint8Attr(0))
			zeroEncap(data, nl.IFLA_GRE_ENCAP_TYPE)
		},
		ipArgs: func(l *Link) string { return "local 0.0.0.0 remote " + l.Remote.String() + " pmtudisc" },
	}
}
