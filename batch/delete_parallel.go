package batch

import (
	"context"
	"errors"
	"maps"
	"sync"
	"sync/atomic"

	"github.com/devbulk/devbulk/nlbatch"
)

// DeleteParallel deletes one by one from several workers.
const DeleteParallel DeleteStrategy = "parallel"

// ParallelOptions are the parallel strategy's own (delete and move).
type ParallelOptions struct {
	Workers int // sockets, each on a worker of its own; default 4
}

// Strategy names the strategies that take them.
func (ParallelOptions) Strategy() string { return "parallel" }

// workerCount is the count of workers own asks for.
func workerCount(own Own) int {
	if p, ok := own.(ParallelOptions); ok && p.Workers > 0 {
		return p.Workers
	}
	return 4
}

// parallel splits the devices over workers, each deleting one by one on a
// socket of its own (ParallelOptions.Workers); the lower devices go last,
// on the Target's socket, once every upper device is gone.
func init() {
	register(DeleteParallel, &strategy{
		order: 3,
		ready: func(t Target, _ *Set, _ DeleteOptions) error {
			if t.dialer() == nil {
				return errNoDialer("the parallel strategy")
			}
			return nil
		},
		tearDown: afterLook(deleteParallel),
	})
}

func deleteParallel(ctx context.Context, d *job) (map[int32]bool, error) {
	uppers, lowers := d.s.split(d.mine)
	confirmed, err := d.parallel(ctx, uppers, progressFrom(d.o.Progress, 0, len(d.mine)))
	if err == nil && len(lowers) > 0 && ctx.Err() == nil {
		// Only once every upper is gone: a lower device takes its
		// uppers along, under the other workers' feet.
		var more map[int32]bool
		more, err = d.each(ctx, oneByOne{c: d.t.Conn, devs: lowers, window: 1,
			progress: progressFrom(d.o.Progress, len(uppers), len(d.mine)), p: d.p})
		maps.Copy(confirmed, more)
	}
	return confirmed, err
}

// parallel deletes devs over the workers, one by one each, every worker
// taking every workers-th device.
func (d *job) parallel(ctx context.Context, devs []nlbatch.Link, progress func(int)) (map[int32]bool, error) {
	workers := min(workerCount(d.o.Own), max(1, len(devs)))
	conns := make([]*nlbatch.Conn, workers)
	for w := range conns {
		c, err := d.t.dialer().Dial("", nlbatch.Options{})
		if err != nil {
			return nil, err
		}
		defer c.Close()
		conns[w] = c
	}
	var handled atomic.Int64
	phases := make([]Phase, workers)
	confirmed := make([]map[int32]bool, workers)
	results := make([][]nlbatch.Result, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range conns {
		wg.Go(func() {
			var mine []nlbatch.Link
			for i := w; i < len(devs); i += workers {
				mine = append(mine, devs[i])
			}
			prev := 0
			count := func(n int) {
				if progress != nil {
					progress(int(handled.Add(int64(n - prev))))
				}
				prev = n
			}
			confirmed[w], results[w], errs[w] = d.windows(ctx, oneByOne{c: conns[w], devs: mine, window: 1, progress: count, p: &phases[w]})
		})
	}
	wg.Wait()
	all := map[int32]bool{}
	var res []nlbatch.Result
	for w := range phases {
		maps.Copy(all, confirmed[w])
		d.p.merge(&phases[w])
		res = append(res, results[w]...)
	}
	d.p.Requests = latencies(res)
	return all, errors.Join(errs...)
}
