package batch

import (
	"context"
	"errors"
	"fmt"

	"github.com/devbulk/devbulk/devices"
	"github.com/devbulk/devbulk/nlbatch"
)

// RequestOptions tune Create.
type RequestOptions struct {
	Strategy CreateStrategy
	// Progress, when not nil, gets the number of requests answered so far,
	// once per sendmsg.
	Progress func(done int)
	// Echo asks the kernel to answer each creation with the new link
	// (NLM_F_ECHO), which gives its ifindex without a lookup: kernels that
	// echo new links (6.18 here; Debian's 6.1 does not) save a round trip
	// per link. The echo is work the kernel does inside the measured phase
	// and iproute2 does not ask for, so a bench leaves it off.
	Echo bool
}

// Create sends the requests that create links and measures the phase: the
// requests and their answers, nothing else. found[i] is links[i] as the
// kernel made it, with its ifindex, or the zero Link when it was not
// created. Each link is known from its echo, or else looked up by name
// after the phase, where it counts only with the run's group: a request
// whose ACK was lost counts as created only when the lookup finds the link.
func Create(ctx context.Context, c *nlbatch.Conn, links []devices.Link, o RequestOptions) (p Phase, found []nlbatch.Link, err error) {
	p = Phase{Name: "create", Tool: "devbulk", Strategy: string(o.Strategy), Devices: len(links)}
	eo := nlbatch.ExecOptions{Progress: o.Progress, Echo: o.Echo} // window 0: Conn's, fits the receive buffer
	if o.Strategy == CreateSerial {
		eo.Window = 1
	}
	found = make([]nlbatch.Link, len(links))
	m := startMeter()
	out, err := execChunked(ctx, c, links, eo, found)
	for _, st := range out.stats {
		p.noteStats(st)
	}
	if err != nil {
		return p, nil, err
	}
	m.stop(&p)
	if eo.Window == 1 {
		p.Requests = summarize(out.latencies) // with many per sendmsg, latency is the sendmsg's
	}
	for i := range out.errs {
		if found[i].Index != 0 {
			out.errs[i] = nil // its echo says it was made, whatever became of its ACK
		}
	}
	if err := findCreated(c, links, out.errs, found); err != nil {
		return p, nil, err
	}
	for i, err := range out.errs {
		if err != nil {
			p.Failed++
			p.noteErrors(fmt.Errorf("%s: %w", links[i].Name, err))
		}
	}
	p.FillRates()
	return p, found, nil
}

// sent is what a create keeps of its requests' results: each one's error
// (nlbatch.Result.Err) and, sent one at a time, their latencies. Whole
// results are 56 bytes a request, 11 MB at 200 000.
type sent struct {
	errs      []error
	latencies []int64 // of a window of 1 only
	stats     []nlbatch.Stats
}

// execChunked sends the links' requests, serialized a chunk at a time (a
// whole number of the Conn's windows, at least 8192 requests): 200 000
// requests held at once are 20 MB. An echoed link that is the one planned
// goes to found. It returns each chunk's socket statistics.
func execChunked(ctx context.Context, c *nlbatch.Conn, links []devices.Link, eo nlbatch.ExecOptions, found []nlbatch.Link) (sent, error) {
	w := max(1, c.Window())
	chunk := w * ((8192 + w - 1) / w)
	out := sent{errs: make([]error, 0, len(links))}
	progress := eo.Progress
	for start := 0; start < len(links); start += chunk {
		part := links[start:min(start+chunk, len(links))]
		reqs := make([][]byte, len(part))
		for i := range part {
			reqs[i] = part[i].Message()
		}
		if eo.Echo {
			eo.Reply = func(i int, msg []byte) {
				if l, err := nlbatch.ParseLink(msg); err == nil && isPlanned(l, part[i]) {
					found[start+i] = l
				}
			}
		}
		if progress != nil {
			eo.Progress = func(n int) { progress(start + n) }
		}
		r, st, err := c.ExecuteWith(ctx, reqs, eo)
		out.stats = append(out.stats, st)
		for _, res := range r {
			out.errs = append(out.errs, res.Err)
		}
		if eo.Window == 1 {
			out.latencies = append(out.latencies, sentLatencies(r)...)
		}
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// isPlanned reports whether l is the link planned as want: its name and
// group.
func isPlanned(l nlbatch.Link, want devices.Link) bool {
	return l.Index != 0 && l.Name == want.Name && l.Group == want.Group
}

// findCreated looks up by name every link that was created (or whose ACK
// was lost) and is not in found yet, pipelined, and settles reqErrs: a lost ACK
// becomes success when the link is there with the run's group, and a
// success whose link is not there (renamed or deleted by someone else
// since) becomes a failure.
func findCreated(c *nlbatch.Conn, links []devices.Link, reqErrs []error, found []nlbatch.Link) error {
	// A chunk at a time: the names and answers of 200 000 lookups held at
	// once are 24 MB.
	const chunk = 8192
	which := make([]int, 0, chunk)
	names := make([]string, 0, chunk)
	flush := func() error {
		if len(which) == 0 {
			return nil
		}
		now, errs, err := lookUpNames(c, names)
		if err != nil {
			return err
		}
		for k, i := range which {
			switch {
			case errs[k] == nil && isPlanned(now[k], links[i]):
				found[i], reqErrs[i] = now[k], nil
			case errors.Is(reqErrs[i], nlbatch.ErrAckLost):
				reqErrs[i] = fmt.Errorf("ACK lost and the link is not there: %w", nlbatch.ErrAckLost)
			default:
				reqErrs[i] = errors.New("created, but not found with the run's name and group afterwards (renamed, moved or deleted by someone else)")
			}
		}
		which, names = which[:0], names[:0]
		return nil
	}
	for i, err := range reqErrs {
		if found[i].Index == 0 && (err == nil || errors.Is(err, nlbatch.ErrAckLost)) {
			which = append(which, i)
			names = append(names, links[i].Name)
			if len(which) == chunk {
				if err := flush(); err != nil {
					return err
				}
			}
		}
	}
	return flush()
}

// lookUpNames looks links up by name, pipelined; an answer that was dropped
// is asked for once more, alone.
func lookUpNames(c *nlbatch.Conn, names []string) ([]nlbatch.Link, []error, error) {
	now, errs, err := c.LinksByName(context.Background(), names)
	if err != nil {
		return nil, nil, fmt.Errorf("looking devices up: %w", err)
	}
	for i := range names {
		if errors.Is(errs[i], nlbatch.ErrAckLost) {
			now[i], errs[i] = c.LinkByName(names[i])
		}
	}
	return now, errs, nil
}
