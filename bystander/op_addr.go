package bystander

import (
	"context"
	"net"

	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// addr: add an address to the namespace's lo and remove it, as a routing
// daemon does (RTNL both ways).
func init() {
	register("addr", &spec{help: "add and remove an address", rate: 50, make: func(e *env) (op, error) {
		add, del := addrRequest(unix.RTM_NEWADDR, 1), addrRequest(unix.RTM_DELADDR, 1)
		return func(ctx context.Context) (int, error) {
			if err := e.conn.Do(ctx, add); err != nil {
				return 0, err
			}
			return 0, e.conn.Do(ctx, del)
		}, nil
	}})
}

// addrRequest adds or removes 198.18.0.1/32 (a benchmarking range) on the
// device of ifindex index.
func addrRequest(typ int, index int32) []byte {
	flags := unix.NLM_F_ACK
	if typ == unix.RTM_NEWADDR {
		flags |= unix.NLM_F_CREATE | unix.NLM_F_EXCL
	}
	req := nl.NewNetlinkRequest(typ, flags)
	msg := nl.NewIfAddrmsg(unix.AF_INET)
	msg.Prefixlen, msg.Index = 32, uint32(index)
	req.AddData(msg)
	ip := net.IPv4(198, 18, 0, 1).To4()
	req.AddData(nl.NewRtAttr(unix.IFA_LOCAL, ip))
	req.AddData(nl.NewRtAttr(unix.IFA_ADDRESS, ip))
	return req.Serialize()
}
