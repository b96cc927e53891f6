package batch

import (
	"context"

	"github.com/devbulk/devbulk/nlbatch"
)

// The move strategies that send one RTM_NEWLINK with IFLA_NET_NS_FD per
// device.
const (
	// MoveSerial waits for each request's ACK before the next.
	MoveSerial MoveStrategy = "serial"
	// MovePipelined keeps a window of them in flight (the Conn's).
	MovePipelined MoveStrategy = "pipelined"
	// MoveParallel splits the links over workers, one by one each, on
	// sockets of their own (ParallelOptions.Workers, as MoveOptions.Own).
	MoveParallel MoveStrategy = "parallel"
)

func init() {
	registerMove(MoveSerial, &moveStrategy{order: 0, run: oneByOneMove(1)})
	registerMove(MovePipelined, &moveStrategy{order: 1, run: oneByOneMove(0)})
	registerMove(MoveParallel, &moveStrategy{
		order: 2,
		ready: func(t Target) error {
			if t.dialer() == nil {
				return errNoDialer("the parallel strategy")
			}
			return nil
		},
		run: func(ctx context.Context, d *job, links []nlbatch.Link, _ Destination) (map[int32]bool, error) {
			return d.parallel(ctx, links, progressFrom(d.o.Progress, 0, len(links)))
		},
	})
}

// oneByOneMove moves the links one request each, window at a time (0: the
// Conn's), each window looked up again first (job.each).
func oneByOneMove(window int) func(ctx context.Context, d *job, links []nlbatch.Link, _ Destination) (map[int32]bool, error) {
	return func(ctx context.Context, d *job, links []nlbatch.Link, _ Destination) (map[int32]bool, error) {
		return d.each(ctx, oneByOne{c: d.t.Conn, devs: links, window: window, progress: progressFrom(d.o.Progress, 0, len(links)), p: d.p})
	}
}
