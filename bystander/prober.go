package bystander

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/devbulk/devbulk"

	"github.com/devbulk/devbulk/devices"
	"github.com/devbulk/devbulk/namespace"
	"github.com/devbulk/devbulk/nlbatch"
)

// sample is one operation: when it was due, sent and answered.
type sample struct {
	due, sent, done time.Time
	interrupted     int
	err             error
}

// clock is the time the prober keeps; tests fake it.
type clock interface {
	Now() time.Time
	// SleepUntil waits until t or until ctx ends (false).
	SleepUntil(ctx context.Context, t time.Time) bool
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) SleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// Prober runs one bystander until Stop.
type Prober struct {
	cfg    Config
	clk    clock
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
	// release drops the prober's namespaces (and so what it made there).
	release func()

	// start is when the first operation was due: Stats and Trace count
	// from it.
	start time.Time

	mu      sync.Mutex
	cond    *sync.Cond
	samples []sample
	stopped bool
	paused  bool
}

// Start makes the prober's throwaway namespace (and, for an operation that
// needs one, a second for peers) and starts issuing operations. The link
// operation creates the cheapest kind this kernel has (dummy, else ifb,
// probed) whose module is not one of avoid: the modules the caller may
// unload, which would take the prober's devices (and refuse to, seeing
// them). The namespaces are held by file descriptors only: they go with
// devbulk, even on kill -9.
func Start(cfg Config, avoid ...string) (*Prober, error) {
	sp := ops[cfg.Op]
	if sp == nil {
		return nil, fmt.Errorf("%w: unknown operation %q", ErrBad, cfg.Op)
	}
	kind, err := linkKind(avoid)
	if err != nil {
		return nil, err
	}
	e, release, err := newEnv(sp, kind)
	if err != nil {
		return nil, fmt.Errorf("the bystander's namespace: %w", err)
	}
	do, err := sp.make(e)
	if err != nil {
		release()
		return nil, err
	}
	p := newProber(cfg, realClock{})
	p.release = release
	go p.loop(do)
	return p, nil
}

// linkKind is the kind the link operation creates: the first of the lower
// kinds (dummy, ifb) that this kernel creates and whose module is not one
// of avoid.
func linkKind(avoid []string) (*devices.Kind, error) {
	sup, err := devices.Probe(devices.LowerKinds()...)
	if err != nil {
		return nil, fmt.Errorf("the bystander's kind: %w", err)
	}
	works := devices.Works(sup)
	for _, k := range devices.LowerKinds() {
		if works[k.Name] && !slices.Contains(avoid, k.Module) {
			return k, nil
		}
	}
	return nil, devbulk.NotSupported("the bystander creates %s, and here none is left that this run does not unload", devices.NamesOf(devices.LowerKinds()))
}

func newEnv(sp *spec, kind *devices.Kind) (*env, func(), error) {
	ns, err := namespace.NewDedicated()
	if err != nil {
		return nil, nil, err
	}
	e := &env{ns: ns, kind: kind}
	release := func() {
		ns.Release()
		if e.peer != nil {
			e.peer.Release()
		}
	}
	if e.conn, err = nlbatch.Dial(ns.NS, nlbatch.Options{}); err != nil {
		release()
		return nil, nil, err
	}
	ns.Hold(e.conn)
	if sp.peer {
		if e.peer, err = namespace.NewDedicated(); err != nil {
			release()
			return nil, nil, err
		}
	}
	return e, release, nil
}

func newProber(cfg Config, clk clock) *Prober {
	p := &Prober{cfg: cfg, clk: clk, done: make(chan struct{}), start: clk.Now()}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	p.cond = sync.NewCond(&p.mu)
	return p
}

// loop issues the operations open loop: the i-th is due at start + i/rate,
// whenever the one before it was answered.
func (p *Prober) loop(do op) {
	defer close(p.done)
	ctx, interval, next := p.ctx, p.interval(), p.start
	for {
		if p.waitResumed() {
			next = p.clk.Now() // a new schedule: nothing was due while paused
		}
		due := next
		next = next.Add(interval)
		if !p.clk.SleepUntil(ctx, due) {
			break
		}
		s := sample{due: due, sent: p.clk.Now()}
		s.interrupted, s.err = do(ctx)
		s.done = p.clk.Now()
		p.mu.Lock()
		p.samples = append(p.samples, s)
		p.cond.Broadcast()
		p.mu.Unlock()
	}
	p.mu.Lock()
	p.stopped = true
	p.cond.Broadcast()
	p.mu.Unlock()
}

// Pause stops issuing operations until Resume: a bench measures the same
// phases without the prober, to tell what the prober itself costs.
func (p *Prober) Pause() { p.setPaused(true) }

// Resume starts issuing again, on a new schedule from now.
func (p *Prober) Resume() { p.setPaused(false) }

func (p *Prober) setPaused(v bool) {
	p.mu.Lock()
	p.paused = v
	p.cond.Broadcast()
	p.mu.Unlock()
}

// waitResumed waits while the prober is paused (until Resume or Stop),
// and reports whether it was.
func (p *Prober) waitResumed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	was := p.paused
	for p.paused && p.ctx.Err() == nil {
		p.cond.Wait()
	}
	return was
}

// Stop stops the prober and releases its namespaces with what they hold.
func (p *Prober) Stop() {
	p.cancel()
	p.setPaused(false)
	<-p.done
	if p.release != nil {
		p.release()
	}
}

// Window summarises the operations outstanding at any time in [from, to):
// due before to and answered after from. A phase shorter than the
// prober's interval still holds the operation it kept waiting. Window
// waits until every operation due before to has been answered, or the
// prober stopped.
func (p *Prober) Window(from, to time.Time) Stats {
	p.mu.Lock()
	for !p.stopped && (len(p.samples) == 0 || p.samples[len(p.samples)-1].due.Add(p.interval()).Before(to)) {
		p.cond.Wait()
	}
	var in []sample
	for _, s := range p.samples {
		if !s.done.Before(from) && s.due.Before(to) {
			in = append(in, s)
		}
	}
	p.mu.Unlock()
	st := summarise(p.cfg, from, in)
	st.From, st.To = from.Sub(p.start).Nanoseconds(), to.Sub(p.start).Nanoseconds()
	return st
}

// Point is one operation: when it was due (since the prober's first) and
// its latency from then.
type Point struct {
	At      int64 `json:"at_ns"`
	Latency int64 `json:"latency_ns"`
}

// Trace is every operation answered so far, in order: the latency over
// time a chart draws, with the phases' windows (Stats.From, To).
func (p *Prober) Trace() []Point {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]Point, len(p.samples))
	for i, s := range p.samples {
		out[i] = Point{s.due.Sub(p.start).Nanoseconds(), s.done.Sub(s.due).Nanoseconds()}
	}
	return out
}

// IdleFor is how long Baseline lets the prober run alone: two seconds, and
// at least 100 operations (a p99 of fewer is their maximum).
func (p *Prober) IdleFor() time.Duration {
	return max(2*time.Second, time.Duration(100/p.cfg.Rate*float64(time.Second)))
}

// Baseline is the prober's idle baseline: its operations over IdleFor,
// while the caller does nothing else. Phases are judged against it.
func (p *Prober) Baseline(ctx context.Context) (Stats, error) {
	from := time.Now()
	select {
	case <-time.After(p.IdleFor()):
	case <-ctx.Done():
		return Stats{}, ctx.Err()
	}
	st := p.Window(from, time.Now())
	st.Saturated = st.P50 > p.interval().Nanoseconds()
	return st, nil
}

// Config is what the prober issues.
func (p *Prober) Config() Config { return p.cfg }

func (p *Prober) interval() time.Duration { return time.Duration(float64(time.Second) / p.cfg.Rate) }
