package bench

import (
	"context"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/devbulk/devbulk/batch"
	"github.com/devbulk/devbulk/bystander"
	"github.com/devbulk/devbulk/devices"
	"github.com/devbulk/devbulk/internal/result"
)

// startBystander starts o's prober and measures its idle baseline (nothing
// of the bench runs yet). Its link operation creates the cheapest kind
// this kernel has whose module the bench does not unload.
func startBystander(ctx context.Context, o Options) (*bystander.Prober, *bystander.Stats, error) {
	var avoid []string
	if slices.ContainsFunc(o.Deletes, batch.DeleteStrategy.UnloadsModules) {
		for _, k := range []*devices.Kind{o.Kind, o.Lower} {
			if k != nil {
				avoid = append(avoid, k.Module)
			}
		}
	}
	p, err := bystander.Start(*o.Bystander, avoid...)
	if err != nil {
		return nil, nil, err
	}
	o.progress("bystander %s: idle baseline, %s", o.Bystander, p.IdleFor())
	idle, err := p.Baseline(ctx)
	if err != nil {
		p.Stop()
		return nil, nil, err
	}
	return p, &idle, nil
}

// beside adds to phase p, begun at began and just ended, what the
// bystander waited meanwhile.
func (o *runner) beside(p *Phase, began time.Time) {
	o.end()
	if o.prober != nil {
		st := o.prober.Window(began, time.Now())
		p.Bystander = &st
	}
}

// writeBystander prints what the bystander waited in each phase, against
// its idle baseline.
func (r *Report) writeBystander(w io.Writer) error {
	idle := r.BystanderIdle
	if idle == nil {
		return nil
	}
	fmt.Fprintf(w, "\nbystander %s/s in a namespace of its own; latency counts from when each operation was due (open loop):\n", bystander.Config{Op: idle.Op, Rate: idle.Rate})
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "N\trep\tphase\tstrategy\tops\tp50\tp99\tmax\tlongest stall\tbegan at\tp99/idle p99\terrors\t")
	row := func(n, rep, phase, strategy string, s *bystander.Stats) {
		ratio := "-"
		if idle.P99 > 0 && s.Ops > 0 {
			ratio = fmt.Sprintf("%.1f×", float64(s.P99)/float64(idle.P99))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t\n", n, rep, phase, strategy, s.Ops,
			result.FormatNS(s.P50), result.FormatNS(s.P99), result.FormatNS(s.Max), result.FormatNS(s.LongestStall), result.FormatNS(s.StallBegan), ratio, s.Errors)
	}
	row("idle", "", "", "", idle)
	for _, c := range r.Runs {
		for _, p := range c.Phases() {
			if p.Bystander != nil {
				row(fmt.Sprint(c.Count), fmt.Sprint(c.Repeat), p.Name, p.Strategy, p.Bystander)
			}
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if idle.Errors > 0 {
		fmt.Fprintf(w, "bystander errors while idle: %d (first: %s)\n", idle.Errors, idle.FirstError)
	}
	return nil
}

// pauses are the prober's states for the cycles of repetition rep: just
// running, or with Influence running and paused, the order alternating.
func (o Options) pauses(rep int) []bool {
	switch {
	case !o.Influence || o.Bystander == nil:
		return []bool{false}
	case rep%2 == 0:
		return []bool{true, false}
	}
	return []bool{false, true}
}

// influence compares, phase by phase, the cycles of count n run with the
// prober against those run with it paused.
func (r *Report) influence(n int, with, without []Cycle) {
	r.Influence = appendIf(r.Influence, vs(n, "create", string(with[0].Create.Strategy),
		side{"without bystander", walls(without, func(c Cycle) *Phase { return &c.Create })},
		side{"with bystander", walls(with, func(c Cycle) *Phase { return &c.Create })}))
	for _, d := range strategies(with, deleteOf) {
		r.Influence = appendIf(r.Influence, vs(n, "delete", d,
			side{"without bystander", walls(byStrategy(without, deleteOf, d), deleteOf)},
			side{"with bystander", walls(byStrategy(with, deleteOf, d), deleteOf)}))
	}
}

// writeInfluence says, in words, what the prober added to each phase.
func (r *Report) writeInfluence(w io.Writer) {
	if len(r.Influence) == 0 {
		return
	}
	fmt.Fprintf(w, "\nWhat the bystander itself costs (--bystander-influence: each cycle also run with the prober paused, interleaved):\n")
	for _, c := range r.Influence {
		fmt.Fprintf(w, "  N=%d %s %s: with the bystander, %s\n", c.Count, c.Phase, c.Strategy, c.Words("cycle"))
	}
}
