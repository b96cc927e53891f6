package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/devbulk/devbulk"
	"github.com/devbulk/devbulk/batch"
	"github.com/devbulk/devbulk/internal/result"
)

// spreadApplies refuses a spread (Options.Namespaces) without 1, the
// reference each count is compared with, with more namespaces than the
// smallest count has devices, beside another mode (a move, a comparison,
// windows, the bystander's influence, tracing or profiling: each measures
// one namespace's phase), or with a delete strategy whose kernel work is
// not each namespace's own.
func (o *Options) spreadApplies() error {
	ns := o.Namespaces
	if len(ns) == 0 {
		return nil
	}
	list := strings.Trim(strings.ReplaceAll(fmt.Sprint(ns), " ", ","), "[]")
	switch {
	case !slices.Contains(ns, 1):
		return devbulk.Mark(batch.ErrConflict, "--namespaces %q: include 1, the reference each count is compared with", list)
	case len(o.Counts) > 0 && slices.Max(ns) > slices.Min(o.Counts):
		return devbulk.Mark(batch.ErrConflict, "--namespaces %q: %d namespaces for --count %d leaves some empty", list, slices.Max(ns), slices.Min(o.Counts))
	case len(o.Moves) > 0 || o.Compare || len(o.Windows) > 0 || o.Influence || o.TraceRCU || o.Profile:
		return devbulk.Mark(batch.ErrConflict, "--namespaces goes with no --move, --compare, --window, --bystander-influence, --trace-rcu or --profile")
	}
	for _, d := range o.Deletes {
		if why := d.Shared(); why != "" {
			return devbulk.Mark(batch.ErrNotApplicable, "--namespaces takes the delete strategies that run in each namespace on their own: not %s (%s)", d, why)
		}
	}
	return nil
}

// spread runs one cycle of n devices spread over k namespaces of their
// own (Options.Namespaces), a worker each: all create at once, then all
// delete at once with strategy d. Each phase's wall time runs from the
// first worker's start to the last one's end: on a kernel where those
// requests take one global lock (RTNL), more namespaces gain nothing; where
// they take only their namespace's, they do.
func spread(ctx context.Context, o *runner, n, k int, d batch.DeleteStrategy) (Cycle, error) {
	c := Cycle{Count: n, Namespaces: k}
	stages := make([]*stage, k)
	defer func() {
		for _, st := range stages {
			if st != nil {
				st.release()
			}
		}
	}()
	for i := range stages {
		var err error
		if stages[i], err = newStage(o.Options, n/k+boolInt(i < n%k)); err != nil {
			return c, err
		}
	}
	var err error
	began := o.begin("create " + string(o.Create))
	c.Create, err = together(stages, batch.Phase{Name: "create", Tool: "devbulk", Strategy: string(o.Create)}, func(st *stage) (batch.Phase, error) {
		p, found, err := batch.Create(ctx, st.conn, st.links, batch.RequestOptions{Strategy: o.Create})
		st.set.Links, st.links = found, nil
		if err == nil && p.Failed > 0 {
			err = fmt.Errorf("%d of %d links not created: %v", p.Failed, p.Devices, p.Errors)
		}
		return p, err
	})
	o.beside(&c.Create, began)
	if err != nil || ctx.Err() != nil {
		return c, cmp.Or(err, ctx.Err())
	}
	began = o.begin("delete " + string(d))
	c.Delete, err = together(stages, batch.Phase{Name: "delete", Tool: "devbulk", Strategy: string(d)}, func(st *stage) (batch.Phase, error) {
		p, _, err := batch.Delete(ctx, batch.Target{Conn: st.conn, NS: st.ns.NS, Dedicated: st.ns}, st.set, d,
			batch.DeleteOptions{Own: batch.OwnFor(o.Own, string(d)), Cycle: true})
		return p, err
	})
	o.beside(&c.Delete, began)
	return c, err
}

// together runs phase in every stage at once, a goroutine each, and sums
// them up in p: the devices, what failed, the wall time from the first
// start to the last end, and devbulk's CPU time meanwhile.
func together(stages []*stage, p batch.Phase, phase func(*stage) (batch.Phase, error)) (Phase, error) {
	phases := make([]batch.Phase, len(stages))
	errs := make([]error, len(stages))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, st := range stages {
		wg.Go(func() {
			<-start
			phases[i], errs[i] = phase(st)
		})
	}
	gcs, gcNS := result.GC()
	user, sys := result.CPU(false)
	began := time.Now()
	close(start)
	wg.Wait()
	p.WallNS = time.Since(began).Nanoseconds()
	u, s := result.CPU(false)
	g, gNS := result.GC()
	p.UserNS, p.SysNS, p.GCs, p.GCNS = u-user, s-sys, g-gcs, max(0, gNS-gcNS)
	for _, q := range phases {
		p.Devices += q.Devices
		p.Failed += q.Failed
		p.Deleted += q.Deleted
		p.Errors = append(p.Errors, q.Errors...)
	}
	p.FillRates()
	return Phase{Phase: p}, firstOf(errs)
}

// firstOf is the first of the workers' errors, with how many others
// failed (64 workers interrupted are one line, not 64).
func firstOf(errs []error) error {
	var first error
	others := 0
	for _, err := range errs {
		switch {
		case err == nil:
		case first == nil:
			first = err
		default:
			others++
		}
	}
	if others > 0 && !errors.Is(first, context.Canceled) {
		return fmt.Errorf("%w (and %d more namespaces failed)", first, others)
	}
	return first
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// spreadCycles runs the spread cycles of count n, repetition rep: every
// namespace count of o.Namespaces with every delete strategy, the order
// alternating between repetitions.
func spreadCycles(ctx context.Context, o *runner, r *Report, n, rep int) error {
	ks, deletes := slices.Clone(o.Namespaces), slices.Clone(o.Deletes)
	if rep%2 == 0 {
		slices.Reverse(ks)
		slices.Reverse(deletes)
	}
	for _, k := range ks {
		o.at = fmt.Sprintf("N=%d rep %d in %d namespaces", n, rep, k)
		for _, d := range deletes {
			o.progress("N=%d rep %d/%d: %d namespaces at once, %s create, %s delete", n, rep, o.Repeat, k, o.Create, d)
			c, err := spread(ctx, o, n, k, d)
			if err != nil {
				return fmt.Errorf("N=%d in %d namespaces, %s delete, repeat %d: %w", n, k, d, rep, err)
			}
			c.Repeat = rep
			r.Runs = append(r.Runs, c)
		}
	}
	return nil
}

// scaling compares, phase by phase and strategy by strategy, the spread
// cycles of count n in k namespaces against those in one: below 1, the
// work went faster spread out.
func (r *Report) scaling(n int, cycles []Cycle) {
	of := func(k int, phase func(Cycle) *Phase, d string) []float64 {
		var cs []Cycle
		for _, c := range cycles {
			if c.Namespaces == k && (d == "" || c.Delete.Strategy == d) {
				cs = append(cs, c)
			}
		}
		return walls(cs, phase)
	}
	create := func(c Cycle) *Phase { return &c.Create }
	for _, k := range spreads(cycles) {
		if k == 1 {
			continue
		}
		one, many := side{"1 namespace", nil}, side{fmt.Sprintf("%d namespaces", k), nil}
		one.walls, many.walls = of(1, create, ""), of(k, create, "")
		r.Scaling = appendIf(r.Scaling, vs(n, "create", fmt.Sprintf("%s in %d namespaces", cycles[0].Create.Strategy, k), one, many))
		for _, d := range strategies(cycles, deleteOf) {
			one.walls, many.walls = of(1, deleteOf, d), of(k, deleteOf, d)
			r.Scaling = appendIf(r.Scaling, vs(n, "delete", fmt.Sprintf("%s in %d namespaces", d, k), one, many))
		}
	}
}

// spreads are the namespace counts of the cycles, in order.
func spreads(cs []Cycle) []int {
	var out []int
	for _, c := range cs {
		if !slices.Contains(out, c.Namespaces) {
			out = append(out, c.Namespaces)
		}
	}
	slices.Sort(out)
	return out
}
