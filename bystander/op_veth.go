package bystander

import (
	"context"
	"errors"

	"golang.org/x/sys/unix"

	"github.com/devbulk/devbulk/devices"
)

// veth: what a CNI ADD does: a veth whose peer is made directly in another
// namespace (a pod's), up, looked up and addressed; then deleted (its peer
// goes with it).
func init() {
	register("veth", &spec{help: "a pod's veth: peer in another namespace, up, addressed, deleted", rate: 5, peer: true, makes: devices.Veth,
		make: func(e *env) (op, error) {
			links, err := devices.Veth.Plan(devices.Options{Count: 1, Prefix: "bystv", Up: true})
			if err != nil {
				return nil, err
			}
			l := links[0]
			l.PeerNetns = int(e.peer)
			add, del := l.Message(), delByName(l.Name)
			return func(ctx context.Context) (int, error) {
				if err := e.conn.Do(ctx, add); err != nil {
					return 0, err
				}
				made, err := e.conn.LinkByName(l.Name)
				if err == nil {
					err = e.conn.Do(ctx, addrRequest(unix.RTM_NEWADDR, made.Index))
				}
				return 0, errors.Join(err, e.conn.Do(ctx, del))
			}, nil
		}})
}
