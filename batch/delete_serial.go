package batch

import (
	"context"
	"slices"
)

// The one-by-one strategies (see the package documentation).
const (
	DeleteSerial    DeleteStrategy = "serial"
	DeletePipelined DeleteStrategy = "pipelined"
)

// serial sends one RTM_DELLINK and waits for its ACK before the next;
// pipelined keeps a window of them in flight (the Conn's). Each costs the
// kernel a grace period per device: a window does not batch them.
func init() {
	register(DeleteSerial, eachStrategy(1, 1))
	register(DeletePipelined, eachStrategy(2, 0))
}

// eachStrategy deletes the devices one request each, window per sendmsg
// (0: the Conn's).
func eachStrategy(order, window int) *strategy {
	return &strategy{
		order: order,
		tearDown: afterLook(func(ctx context.Context, d *job) (map[int32]bool, error) {
			return d.each(ctx, oneByOne{c: d.t.Conn, devs: d.mine, window: window,
				progress: progressFrom(d.o.Progress, 0, len(d.mine)), p: d.p})
		}),
		ip: func(s *Set) IPCommand { return ipDelEach(append(slices.Clone(s.Links), s.Lowers...)) },
	}
}
