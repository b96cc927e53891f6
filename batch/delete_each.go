package batch

import (
	"context"
	"errors"
	"fmt"

	"github.com/devbulk/devbulk/nlbatch"
)

// oneByOne is a run of one RTM_DELLINK per device.
type oneByOne struct {
	c    *nlbatch.Conn
	devs []nlbatch.Link
	// window is the requests per sendmsg (0: the Conn's).
	window int
	// progress, when set, gets the count handled so far.
	progress func(int)
	// p gets the run's statistics and errors.
	p *Phase
}

// each deletes w.devs one RTM_DELLINK each and returns the ifindexes the
// kernel confirmed deleted. With a window of one, the phase's first such
// run gives the phase its request latencies (lower devices come after).
func (d *job) each(ctx context.Context, w oneByOne) (map[int32]bool, error) {
	confirmed, res, err := d.windows(ctx, w)
	if w.window == 1 && w.p.Requests == nil {
		w.p.Requests = latencies(res)
	}
	return confirmed, err
}

// windows is each without the latency summary: it returns the delete
// requests' results. Right before each window, its devices are looked up
// again; only those still the set's are named.
func (d *job) windows(ctx context.Context, w oneByOne) (map[int32]bool, []nlbatch.Result, error) {
	window := w.window
	if window <= 0 {
		window = w.c.Window()
	}
	confirmed := map[int32]bool{}
	var all []nlbatch.Result
	owns := d.s.owner() // once: it indexes the whole set, and serial has a window per device
	for i := 0; i < len(w.devs) && ctx.Err() == nil; i += window {
		batch := w.devs[i:min(i+window, len(w.devs))]
		mine, _, err := d.s.check(ctx, lookup{c: w.c, owns: owns}, batch)
		if err != nil {
			return confirmed, all, err
		}
		if len(mine) > 0 {
			if err := d.first(); err != nil {
				return confirmed, all, err
			}
		}
		reqs := make([][]byte, len(mine))
		for j, l := range mine {
			reqs[j] = d.request(l)
		}
		res, st, err := w.c.Execute(ctx, reqs, window)
		w.p.noteStats(st)
		if err != nil {
			return confirmed, all, err
		}
		settleDeletes(mine, res, confirmed, w.p)
		all = append(all, res...)
		if w.progress != nil {
			w.progress(i + len(batch))
		}
	}
	return confirmed, all, nil
}

// settleDeletes records what the kernel confirmed and the failures. A
// request whose ACK was lost was executed but may have been refused: it
// counts as confirmed here, and settle afterwards decides (a device
// still there is left, not deleted).
func settleDeletes(devs []nlbatch.Link, res []nlbatch.Result, confirmed map[int32]bool, p *Phase) {
	for i, r := range res {
		switch {
		case !r.Sent:
		case r.Err == nil, errors.Is(r.Err, nlbatch.ErrAckLost):
			confirmed[devs[i].Index] = true
		default:
			p.noteErrors(wrapName(devs[i].Name, r.Err))
		}
	}
}

func wrapName(name string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", name, err)
}
