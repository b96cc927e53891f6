package bench

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/devbulk/devbulk"
	"github.com/devbulk/devbulk/batch"
	"github.com/devbulk/devbulk/bystander"
	"github.com/devbulk/devbulk/devices"
	"github.com/devbulk/devbulk/internal/result"
	"github.com/devbulk/devbulk/kernlog"
	"github.com/devbulk/devbulk/kprofile"
	"github.com/devbulk/devbulk/namespace"
	"github.com/devbulk/devbulk/nlbatch"
	"github.com/devbulk/devbulk/rcutrace"
)

// Options describe a bench: every count × (move strategy ×) delete
// strategy × repeat is one full create→(move→)delete cycle in fresh
// throwaway namespaces.
type Options struct {
	Kind   *devices.Kind
	Counts []int
	Create batch.CreateStrategy
	// Moves, when given, move each cycle's links into a second throwaway
	// namespace after the creation, once per strategy, and the delete
	// runs there (see batch.Move).
	Moves   []batch.MoveStrategy
	Deletes []batch.DeleteStrategy
	Repeat  int
	// Force runs counts whose devices the kernel memory estimate says
	// would not fit (devices.Fits).
	Force     bool
	Up        bool   // create links up
	VlanProto string // vlan: 802.1Q or 802.1ad
	// Lower is the kind of the lower devices devbulk creates for kinds that
	// need them (see devices.LowerKind).
	Lower *devices.Kind
	// Own is the strategies' own options (batch.ParallelOptions,
	// batch.ModuleOptions): each delete or move strategy takes those that
	// name it.
	Own []batch.Own
	// Compare runs the same cycle with iproute2 in its own namespace.
	Compare bool
	// TraceRCU counts the RCU waits and unregister batches of each delete
	// phase (see package rcutrace); where the kernel cannot, Run fails
	// with devbulk.ErrNotSupported before it starts.
	TraceRCU bool
	// Profile breaks each create and delete phase's time down by kernel function (see
	// package kprofile); where the kernel cannot trace, Run fails with an
	// error that matches devbulk.ErrNotSupported.
	Profile bool
	// Namespaces, when set, spreads each cycle's devices over K namespaces
	// of their own for every K given, created and deleted at once, a
	// worker each (Report.Scaling: against K=1). It excludes Moves,
	// Compare and Windows.
	Namespaces []int
	// Windows (group only) runs the group strategy once per window size:
	// a delete of that many devices per request (batch.GroupOptions), 0
	// the whole set at once.
	Windows []int
	// Influence (with Bystander) runs every cycle twice, interleaved, the
	// order alternating: once with the prober paused, to tell what the
	// prober itself adds to the teardown (Report.Influence).
	Influence bool
	// Bystander, when set, runs a prober in a namespace of its own for the
	// whole bench: its idle baseline first, then what it waited during
	// each phase (Phase.Bystander).
	Bystander *bystander.Config
	// Progress, when set, receives one line per step.
	Progress func(string)
	// KernelNoise is the list of the kernel's complaints not reported
	// (kernlog.ReadNoise); every other one the kernel prints during the
	// bench is a finding (Report.KernelLog).
	KernelNoise kernlog.Noise
	// Counter, when set, makes a counter for a phase of total steps that
	// goes one device at a time (creation, one-by-one deletes): the phase
	// reports the steps done to the returned function.
	Counter func(label string, total int) func(done int)
}

// runner is one bench under way: its options, and the instruments Run
// opened for them (and closes when it returns).
type runner struct {
	Options
	rcu        *rcutrace.Counter
	prof       *kprofile.Profiler // delete phases
	createProf *kprofile.Profiler // create phases
	moveProf   *kprofile.Profiler // move phases
	prober     *bystander.Prober
	klog       *kernlog.Watcher
	at         string // the cycle under way, "N=… rep …": where the kernel's complaints are
	phase      string // the phase under way in it
}

// Prefix is the name prefix of bench links (their namespace is devbulk's own).
const Prefix = "dbk"

// Run runs the cycles and returns the report. When ctx ends, the cycle in
// progress stops and its namespace is released, which removes its devices.
func Run(ctx context.Context, opts Options) (*Report, error) {
	o := &runner{Options: opts}
	if o.Repeat <= 0 {
		o.Repeat = 1
	}
	r := &Report{Header: devbulk.NewHeader(), Kind: o.Kind.Name, Up: o.Up}
	defer func() { r.MaxRSSKiB = result.MaxRSSKiB() }()
	o.klog = kernlog.Watch(o.KernelNoise)
	defer func() { s := o.klog.Stop(); r.KernelLog = &s }()
	if o.TraceRCU {
		c, err := rcutrace.New()
		if err != nil {
			return r, fmt.Errorf("--trace-rcu: %w", err)
		}
		defer c.Close()
		o.rcu = c
	}
	if o.Profile {
		var err error
		if o.prof, err = kprofile.New(kprofile.Unregister, 4*slices.Max(o.Counts)); err != nil {
			return r, fmt.Errorf("--profile: %w", err)
		}
		if o.createProf, err = kprofile.New(kprofile.Register, 8*slices.Max(o.Counts)); err != nil {
			return r, fmt.Errorf("--profile: %w", err)
		}
		missing := append(slices.Clone(o.prof.Missing), o.createProf.Missing...)
		if len(o.Moves) > 0 {
			if o.moveProf, err = kprofile.New(kprofile.Move, 8*slices.Max(o.Counts)); err != nil {
				return r, fmt.Errorf("--profile: %w", err)
			}
			missing = append(missing, o.moveProf.Missing...)
		}
		r.Untraceable = slices.Compact(slices.Sorted(slices.Values(missing)))
	}
	if o.Bystander != nil {
		var err error
		if o.prober, r.BystanderIdle, err = startBystander(ctx, o.Options); err != nil {
			return r, err
		}
		defer func() {
			r.BystanderTrace = o.prober.Trace()
			o.prober.Stop()
		}()
	}
	// Side by side, never one after the other: each repetition runs every
	// delete strategy (and, with Compare, both tools) once, and the order
	// alternates between repetitions, so that neither a drift of the
	// machine nor "whoever runs second is slower" favours one side. Every
	// cycle's namespace is released and awaited (dismantled by the kernel)
	// before the next cycle starts.
	for _, n := range o.Counts {
		for rep := 1; rep <= o.Repeat; rep++ {
			run := runCycles
			if len(o.Namespaces) > 0 {
				run = spreadCycles
			}
			if err := run(ctx, o, r, n, rep); err != nil {
				return r, err
			}
		}
	}
	r.compare()
	return r, nil
}

// runCycles runs the cycles of count n, repetition rep: every move and
// delete strategy (and, with Influence, each twice), the order reversed
// on even repetitions.
func runCycles(ctx context.Context, o *runner, r *Report, n, rep int) error {
	moves, deletes := slices.Clone(o.Moves), o.variants()
	if len(moves) == 0 {
		moves = []batch.MoveStrategy{""} // no move
	}
	ipFirst := o.Compare && rep%2 == 0
	if rep%2 == 0 {
		slices.Reverse(moves)
		slices.Reverse(deletes)
	}
	o.at = fmt.Sprintf("N=%d rep %d", n, rep)
	for _, m := range moves {
		for _, d := range deletes {
			for _, paused := range o.pauses(rep) {
				c := Cycle{Count: n, Repeat: rep, IPFirst: ipFirst, BystanderPaused: paused}
				s := cycleOf{m, d}
				if err := twin(ctx, o, &c, s, ipFirst); errors.Is(err, context.Canceled) {
					return fmt.Errorf("N=%d %s, repeat %d (its throwaway namespace released with what it held; %d cycles done): %w", n, s, rep, len(r.Runs), err)
				} else if err != nil {
					return fmt.Errorf("N=%d %s, repeat %d: %w", n, s, rep, err)
				}
				r.Runs = append(r.Runs, c)
			}
		}
	}
	return nil
}

// cycleOf is what a cycle runs: its move (none when "") and its delete.
type cycleOf struct {
	move   batch.MoveStrategy
	delete variant
}

func (s cycleOf) String() string {
	if s.move == "" {
		return fmt.Sprintf("%s delete", s.delete)
	}
	return fmt.Sprintf("%s move, %s delete", s.move, s.delete)
}

// variant is a delete strategy with its own options: a bench runs a
// windowed group delete (Options.Windows) beside the whole one.
type variant struct {
	d   batch.DeleteStrategy
	own batch.Own
}

// String is how results name it: the strategy, or a windowed group's
// label ("group-w100").
func (v variant) String() string {
	if g, ok := v.own.(batch.GroupOptions); ok {
		return g.Label()
	}
	return string(v.d)
}

// variants are the delete strategies each cycle runs, in o.Deletes's
// order, the group strategy once per window of o.Windows.
func (o Options) variants() []variant {
	var out []variant
	for _, d := range o.Deletes {
		if d != batch.DeleteGroup || len(o.Windows) == 0 {
			out = append(out, variant{d, batch.OwnFor(o.Own, string(d))})
			continue
		}
		for _, w := range o.Windows {
			out = append(out, variant{d, batch.GroupOptions{Window: w}})
		}
	}
	return out
}

// twin runs one cycle of strategies s, with devbulk and, with Compare,
// iproute2, in the order given.
func twin(ctx context.Context, o *runner, c *Cycle, s cycleOf, ipFirst bool) error {
	if c.BystanderPaused {
		o.prober.Pause()
		defer o.prober.Resume()
		quiet := *o
		quiet.prober, o = nil, &quiet // no phase of this cycle has a bystander
	}
	devbulkSide := func() error {
		o.progress("N=%d rep %d/%d: %s create, %s", c.Count, c.Repeat, o.Repeat, o.Create, s)
		done, err := cycle(ctx, o, c.Count, s)
		c.Create, c.Move, c.Delete = done.Create, done.Move, done.Delete
		return err
	}
	ipSide := func() (err error) {
		o.progress("N=%d rep %d/%d: iproute2, %s delete", c.Count, c.Repeat, o.Repeat, s.delete)
		c.IPCreate, c.IPDelete, err = ipCycle(ctx, o, c.Count, s.delete.d)
		if err != nil {
			err = fmt.Errorf("iproute2: %w", err)
		}
		return err
	}
	sides := []func() error{devbulkSide}
	if o.Compare {
		sides = append(sides, ipSide)
		if ipFirst {
			slices.Reverse(sides)
		}
	}
	for _, side := range sides {
		if err := side(); err != nil {
			return err
		}
	}
	return nil
}

// phaseCounter is a phase's progress for batch (done out of total, the
// total known only at the first report; parallel workers report from
// several goroutines), drawn by o.Counter; nil without one.
func (o Options) phaseCounter(label string) func(done, total int) {
	if o.Counter == nil {
		return nil
	}
	var once sync.Once
	var bar func(int)
	return func(done, total int) {
		once.Do(func() { bar = o.Counter(label, total) })
		bar(done)
	}
}

func (o Options) progress(format string, args ...any) {
	if o.Progress != nil {
		o.Progress(fmt.Sprintf(format, args...))
	}
}

// stage is a throwaway namespace with a run's lower devices in place and
// its links planned.
type stage struct {
	ns    *namespace.Dedicated
	conn  *nlbatch.Conn
	set   *batch.Set
	links []devices.Link
}

// emptyStage is a throwaway namespace with a socket in it.
func emptyStage() (*stage, error) {
	ns, err := namespace.NewDedicated()
	if err != nil {
		return nil, err
	}
	st := &stage{ns: ns}
	if st.conn, err = nlbatch.Dial(ns.NS.Handle, nlbatch.Options{}); err != nil {
		ns.Release()
		return nil, err
	}
	ns.Hold(st.conn) // released with the namespace
	return st, nil
}

func newStage(o Options, n int) (*stage, error) {
	st, err := emptyStage()
	if err != nil {
		return nil, err
	}
	st.set = &batch.Set{Kind: o.Kind, Group: batch.FreshGroup(nil, nil), Prefix: Prefix}
	if o.Kind.NeedsLower {
		st.set.LowerKind = o.Lower
	}
	opts := devices.Options{Count: n, Prefix: Prefix, Group: st.set.Group, Up: o.Up, VlanProto: o.VlanProto}
	if o.Kind.NeedsLower {
		if st.set.Lowers, err = batch.PrepareLowers(context.Background(), st.conn, o.Kind, o.Lower,
			devices.Options{Count: n, Prefix: Prefix, Group: st.set.Group, Up: o.Up}); err != nil {
			st.release()
			return nil, err
		}
		opts.Lowers = batch.AsLowers(st.set.Lowers)
	}
	if st.links, err = o.Kind.Plan(opts); err != nil {
		st.release()
		return nil, err
	}
	return st, nil
}

// release drops the namespace and waits (unmeasured) until the kernel has
// dismantled it, so the next cycle does not share the machine with it.
func (st *stage) release() {
	_ = st.ns.ReleaseAndWait(2 * time.Minute)
}

func cycle(ctx context.Context, o *runner, n int, s cycleOf) (c Cycle, err error) {
	d := s.delete.d
	c = Cycle{Count: n}
	st, err := newStage(o.Options, n)
	if err != nil {
		return c, err
	}
	defer st.release()
	var progress func(int)
	if o.Counter != nil {
		progress = o.Counter(fmt.Sprintf("N=%d create", n), n)
	}
	// No echo: the phase is the kernel's work as iproute2 asks for it; the
	// links are looked up after it.
	var found []nlbatch.Link
	began := o.begin("create " + string(o.Create))
	p, err := profiled(o.createProf, func() (p Phase, err error) {
		// The trace buffer is allocated before the memory is read.
		mem := startKernelMem()
		p.Phase, found, err = batch.Create(ctx, st.conn, st.links, batch.RequestOptions{Strategy: o.Create, Progress: progress})
		p.KernelMem = mem(p.Devices - p.Failed)
		return p, err
	}, func(p Phase) int { return p.Devices - p.Failed })
	c.Create = p
	o.beside(&c.Create, began)
	if err != nil {
		return c, err
	}
	if ctx.Err() != nil {
		return c, ctx.Err()
	}
	if p.Failed > 0 {
		return c, fmt.Errorf("%d of %d links not created: %v", p.Failed, n, p.Errors)
	}
	st.set.Links, st.links = found, nil // the set has what the delete needs; 100 000 planned links are ~12 MB
	t := batch.Target{Conn: st.conn, NS: st.ns.NS, Dedicated: st.ns}
	if s.move != "" {
		var to *stage
		if c.Move, to, err = moved(ctx, o, st, s.move); err != nil {
			return c, err
		}
		defer to.release()
		t, st = batch.Target{Conn: to.conn, NS: to.ns.NS, Dedicated: to.ns}, to
	}
	do := batch.DeleteOptions{Own: s.delete.own, Cycle: true,
		Progress: o.phaseCounter(fmt.Sprintf("N=%d %s delete", n, s.delete))}
	began = o.begin("delete " + s.delete.String())
	c.Delete, err = traced(o, func() (batch.Phase, error) {
		p, _, err := batch.Delete(ctx, t, st.set, d, do)
		return p, err
	})
	o.beside(&c.Delete, began)
	return c, err
}

// moved moves the links of st into a second throwaway namespace by
// strategy m, and returns the phase and that namespace's stage, whose set
// holds the links as they are there (the lower devices devbulk made stay
// in st's namespace, and go with it).
func moved(ctx context.Context, o *runner, st *stage, m batch.MoveStrategy) (*Phase, *stage, error) {
	to, err := emptyStage()
	if err != nil {
		return nil, nil, err
	}
	mo := batch.MoveOptions{To: batch.Destination{Conn: to.conn, NS: to.ns.NS}, Own: batch.OwnFor(o.Own, string(m)),
		Progress: o.phaseCounter(fmt.Sprintf("N=%d %s move", len(st.set.Links), m))}
	t := batch.Target{Conn: st.conn, NS: st.ns.NS, Dedicated: st.ns}
	began := o.begin("move " + string(m))
	p, err := profiled(o.moveProf, func() (Phase, error) {
		return rcuCounted(o, func() (p batch.Phase, err error) { p, to.set, err = batch.Move(ctx, t, st.set, m, mo); return p, err })
	}, func(p Phase) int { return p.Devices })
	o.beside(&p, began)
	if err == nil && p.Failed > 0 {
		err = fmt.Errorf("%d of %d links not moved: %s", p.Failed, p.Devices, strings.Join(p.Errors, "; "))
	}
	if err != nil {
		to.release()
		return &p, nil, err
	}
	return &p, to, nil
}

// traced runs a delete phase with its RCU counts (--trace-rcu) and its
// profile (--profile), when asked for. The RCU counts go inside the
// profile's bounds: switching the tracer on and off waits for RCU itself.
func traced(o *runner, del func() (batch.Phase, error)) (Phase, error) {
	return profiled(o.prof, func() (Phase, error) { return rcuCounted(o, del) }, func(p Phase) int { return p.Devices })
}

// rcuCounted runs a phase with its RCU counts (--trace-rcu), when asked
// for.
func rcuCounted(o *runner, phase func() (batch.Phase, error)) (p Phase, err error) {
	if o.rcu != nil {
		if err := o.rcu.Reset(); err != nil {
			return p, err
		}
	}
	p.Phase, err = phase()
	if o.rcu != nil && err == nil {
		p.RCU, err = o.rcu.Read()
	}
	return p, err
}

// profiled runs a phase under the kernel profiler, when there is one, and
// adds the profile to the phase, per device of units.
func profiled(prof *kprofile.Profiler, run func() (Phase, error), units func(Phase) int) (Phase, error) {
	if prof == nil {
		return run()
	}
	if err := prof.Start(); err != nil {
		return Phase{}, fmt.Errorf("--profile: %w", err)
	}
	p, err := run()
	pr, perr := prof.Stop(p.WallNS, units(p)) // puts the tracer back, whatever run did
	if err == nil && perr != nil {
		err = fmt.Errorf("--profile: %w", perr)
	}
	if pr != nil {
		p.Profile, p.UnattributedNS = pr.Entries, pr.UnattributedNS
	}
	return p, err
}

// ipCycle does the cycle's work with iproute2 in a namespace of its own.
func ipCycle(ctx context.Context, o *runner, n int, d batch.DeleteStrategy) (create, del *Phase, err error) {
	st, err := newStage(o.Options, n)
	if err != nil {
		return nil, nil, err
	}
	defer st.release()
	o.begin("iproute2 create")
	defer o.end()
	if create, err = ipCreate(ctx, st.ns.NS.Handle, st.links); err != nil {
		return create, nil, err
	}
	if err := st.set.LookUp(st.conn, devices.LinkNames(st.links)); err != nil {
		return create, nil, err
	}
	if len(st.set.Links) != n {
		return create, nil, fmt.Errorf("ip -batch created %d of %d links", len(st.set.Links), n)
	}
	o.begin("iproute2 delete " + string(d))
	if del, err = ipDelete(ctx, st.ns.NS.Handle, d, st.set); err != nil || del == nil {
		return create, del, err
	}
	left, err := st.set.Present(context.Background(), st.conn)
	if err != nil {
		return create, del, err
	}
	if k := len(left); k > 0 {
		return create, del, fmt.Errorf("%w after iproute2: %d of %d", batch.ErrSurvivors, k, n)
	}
	return create, del, ctx.Err()
}

// begin says phase begins in the cycle under way: what the kernel prints
// from now on is the phase's. It returns when.
func (o *runner) begin(phase string) time.Time {
	o.phase = phase
	o.klog.Phase(o.at + " " + phase)
	return time.Now()
}

// end says the phase under way ended: what the kernel prints from now on
// (a report it makes late, or of the namespace's release) is after it.
func (o *runner) end() { o.klog.Phase(o.at + " after " + o.phase) }
