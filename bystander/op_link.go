package bystander

import (
	"context"

	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"

	"github.com/devbulk/devbulk/devices"
)

// link: create one device and delete it, both under RTNL, as the next
// container's setup does.
func init() {
	register("link", &spec{help: "create and delete one device", rate: 10, needsKind: true, make: func(e *env) (op, error) {
		links, err := e.kind.Plan(devices.Options{Count: 1, Prefix: "byst"})
		if err != nil {
			return nil, err
		}
		add, del := links[0].Message(), delByName(links[0].Name)
		return func(ctx context.Context) (int, error) {
			if err := e.conn.Do(ctx, add); err != nil {
				return 0, err
			}
			return 0, e.conn.Do(ctx, del)
		}, nil
	}})
}

// delByName is an RTM_DELLINK of the device named name: the prober's own,
// in its own namespace.
func delByName(name string) []byte {
	req := nl.NewNetlinkRequest(unix.RTM_DELLINK, unix.NLM_F_ACK)
	req.AddData(nl.NewIfInfomsg(unix.AF_UNSPEC))
	req.AddData(nl.NewRtAttr(unix.IFLA_IFNAME, nl.ZeroTerminated(name)))
	return req.Serialize()
}
