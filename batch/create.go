package batch

import (
	"context"
	"errors"
	"fmt"

	"github.com/devbulk/devbulk/devices"
	"github.com/devbulk/devbulk/nlbatch"
)

// Create sends the requests that create links and measures the phase. A
// request whose ACK was lost counts as created only when a lookup finds the
// link with the run's group. ok[i] reports whether links[i] exists.
// progress, when not nil, gets the number of requests answered so far,
// once per sendmsg.
func Create(ctx context.Context, c *nlbatch.Conn, links []devices.Link, s CreateStrategy, progress func(done int)) (p Phase, ok []bool, err error) {
	p = Phase{Name: "create", Tool: "devbulk", Strategy: string(s), Devices: len(links)}
	window := 0 // Conn's: fits the receive buffer
	if s == CreateSerial {
		window = 1
	}
	m := startMeter()
	reqs := make([][]byte, len(links))
	for i := range links {
		reqs[i] = links[i].Message()
	}
	res, st, err := c.ExecuteWith(ctx, reqs, nlbatch.ExecOptions{Window: window, Progress: progress})
	if err != nil {
		return p, nil, err
	}
	ok = make([]bool, len(links))
	for i, r := range res {
		if errors.Is(r.Err, nlbatch.ErrAckLost) {
			r.Err = resolveCreated(c, links[i])
		}
		ok[i] = r.Err == nil
		if r.Err != nil {
			p.Failed++
			p.noteErrors(fmt.Errorf("%s: %w", links[i].Name, r.Err))
		}
	}
	m.stop(&p)
	if window == 1 {
		p.Requests = latencies(res) // with many per sendmsg, latency is the sendmsg's
	}
	p.noteStats(st)
	return p, ok, nil
}

// resolveCreated settles a creation whose ACK was lost.
func resolveCreated(c *nlbatch.Conn, l devices.Link) error {
	got, err := c.LinkByName(l.Name)
	if err != nil || got.Group != l.Group {
		return fmt.Errorf("ACK lost and the link is not there: %w", nlbatch.ErrAckLost)
	}
	return nil
}
