// Command linkaddgolden calls netlink.LinkAdd (vishvananda/netlink) for the
// fixed cases below so that the RTM_NEWLINK request bytes it sends can be
// captured. It is run under strace, once per case in a fresh network
// namespace (so nlmsg_seq is always 1), by gen.sh, which regenerates
// devices/testdata/linkadd/<case>.hex. With no arguments it lists the case
// names; otherwise it runs the named cases in order. LinkAdd errors (e.g.
// missing kernel modules) are expected and only printed to stderr.
package main

import (
	"fmt"
	"net"
	"os"

	"github.com/vishvananda/netlink"
)

func attrs(name string, parent int, flags net.Flags) netlink.LinkAttrs {
	la := netlink.NewLinkAttrs()
	la.Name = name
	la.Group = 0x0db00001
	la.ParentIndex = parent
	la.Flags = flags
	return la
}

func main() {
	remote := net.ParseIP("198.18.0.1")
	// An IPv4 Local makes LinkAdd pick "gre"/"gretap" rather than the IPv6 kinds.
	local := net.IPv4zero
	cases := []struct {
		name string
		link netlink.Link
	}{
		{"dummy", &netlink.Dummy{LinkAttrs: attrs("dbk0", 0, 0)}},
		{"dummy_up", &netlink.Dummy{LinkAttrs: attrs("dbk1", 0, net.FlagUp)}},
		{"ifb", &netlink.Ifb{LinkAttrs: attrs("dbk0", 0, 0)}},
		{"bridge", &netlink.Bridge{LinkAttrs: attrs("dbk0", 0, 0)}},
		{"vlan", &netlink.Vlan{LinkAttrs: attrs("dbk0", 7, 0), VlanId: 100, VlanProtocol: netlink.VLAN_PROTOCOL_8021Q}},
		{"vlan_8021ad", &netlink.Vlan{LinkAttrs: attrs("dbk0", 7, 0), VlanId: 4094, VlanProtocol: netlink.VLAN_PROTOCOL_8021AD}},
		{"macvlan", &netlink.Macvlan{LinkAttrs: attrs("dbk0", 7, 0), Mode: netlink.MACVLAN_MODE_BRIDGE}},
		{"veth", &netlink.Veth{LinkAttrs: attrs("dbk0", 0, 0), PeerName: "dbk0p", PeerTxQLen: -1}},
		{"ipip", &netlink.Iptun{LinkAttrs: attrs("dbk0", 0, 0), Remote: remote, PMtuDisc: 1}},
		{"gre", &netlink.Gretun{LinkAttrs: attrs("dbk0", 0, 0), Local: local, Remote: remote, PMtuDisc: 1}},
		{"gretap", &netlink.Gretap{LinkAttrs: attrs("dbk0", 0, 0), Local: local, Remote: remote, PMtuDisc: 1}},
		{"vxlan", &netlink.Vxlan{LinkAttrs: attrs("dbk0", 0, 0), VxlanId: 1, Port: 4789}},
	}
	if len(os.Args) == 1 {
		for _, c := range cases {
			fmt.Println(c.name)
		}
		return
	}
	for _, want := range os.Args[1:] {
		found := false
		for _, c := range cases {
			if c.name != want {
				continue
			}
			found = true
			if err := netlink.LinkAdd(c.link); err != nil {
				fmt.Fprintf(os.Stderr, "%s: LinkAdd: %v\n", c.name, err)
			}
		}
		if !found {
			fmt.Fprintf(os.Stderr, "unknown case %q\n", want)
			os.Exit(2)
		}
	}
}
