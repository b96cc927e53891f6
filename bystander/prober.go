package bystander

import (
	"context"
	"sync"
	"time"

	"github.com/devbulk/devbulk"
	"github.com/devbulk/devbulk/internal/result"
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
	// SleepUntil waits until t (true), or until ctx ends or wake receives
	// (false).
	SleepUntil(ctx context.Context, t time.Time, wake <-chan struct{}) bool
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) SleepUntil(ctx context.Context, t time.Time, wake <-chan struct{}) bool {
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
	case <-wake:
	}
	return false
}

// Prober runs one bystander until Stop.
type Prober struct {
	cfg    Config
	clk    clock
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
	// wake cuts the loop's sleep short when Pause is called.
	wake chan struct{}
	// release drops the prober's namespaces (and so what it made there).
	release func()

	// start is when the first operation was due: Stats and Trace count
	// from it.
	start time.Time

	mu      sync.Mutex
	cond    *sync.Cond
	samples []sample
	stopped bool
	// paused is asked by Pause; parked says the loop has stopped for it
	// (no operation in flight).
	paused, parked bool
}

func newProber(cfg Config, clk clock) *Prober {
	p := &Prober{cfg: cfg, clk: clk, done: make(chan struct{}), wake: make(chan struct{}, 1), start: clk.Now()}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	p.cond = sync.NewCond(&p.mu)
	return p
}

// loop issues the operations open loop: the i-th is due at start + i/rate,
// whenever the one before it was answered.
func (p *Prober) loop(do op) {
	defer close(p.done)
	ctx, interval, next := p.ctx, p.interval(), p.start
	for ctx.Err() == nil {
		if p.park() {
			next = p.clk.Now() // a new schedule: nothing was due while paused
		}
		if !p.clk.SleepUntil(ctx, next, p.wake) || p.isPaused() {
			continue // stopped, or paused meanwhile: park first
		}
		s := sample{due: next, sent: p.clk.Now()}
		next = next.Add(interval)
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
// phases without the prober, to tell what the prober itself costs. It
// returns once no operation is in flight and none will be sent.
func (p *Prober) Pause() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.paused = true
	select {
	case p.wake <- struct{}{}:
	default:
	}
	for !p.parked && !p.stopped {
		p.cond.Wait()
	}
}

// Resume starts issuing again, on a new schedule from now.
func (p *Prober) Resume() {
	p.mu.Lock()
	p.paused = false
	p.cond.Broadcast()
	p.mu.Unlock()
}

func (p *Prober) isPaused() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.paused
}

// park waits while the prober is paused (until Resume or Stop), parked,
// and reports whether it was.
func (p *Prober) park() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	was := p.paused
	for p.paused && p.ctx.Err() == nil {
		p.parked = true
		p.cond.Broadcast()
		p.cond.Wait()
	}
	p.parked = false
	select { // a wake Pause left behind would cut the next sleep short
	case <-p.wake:
	default:
	}
	return was
}

// Stop stops the prober and releases its namespaces with what they hold.
func (p *Prober) Stop() {
	p.cancel()
	p.Resume() // wakes a parked loop
	<-p.done
	if p.release != nil {
		p.release()
	}
}

// Window summarises the operations outstanding at any time in [from, to):
// due before to and answered after from. A phase shorter than the
// prober's interval still holds the operation it kept waiting. Window
// waits until every operation due before to has been answered, or the
// prober is paused or stopped.
func (p *Prober) Window(from, to time.Time) Stats {
	p.mu.Lock()
	for !p.stopped && !p.parked && (len(p.samples) == 0 || p.samples[len(p.samples)-1].due.Add(p.interval()).Before(to)) {
		p.cond.Wait()
	}
	p.mu.Unlock()
	st := summarise(p.cfg, from, p.those(func(s sample) bool { return !s.done.Before(from) && s.due.Before(to) }))
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
// while the caller does nothing else. Phases are judged against it. A
// prober that cannot keep its rate even then (half its operations answered
// more than an interval after they were due) is refused, with an error
// matching ErrBad: its figures would be its own backlog, and every window
// would wait for that backlog.
func (p *Prober) Baseline(ctx context.Context) (Stats, error) {
	from := time.Now()
	select {
	case <-time.After(p.IdleFor()):
	case <-ctx.Done():
		return Stats{}, ctx.Err()
	}
	// Judged on what was answered, without waiting for the rest: a
	// saturated prober's backlog only grows, while one long stall (another
	// process holding the lock) drains, and Window waits for it.
	to := time.Now()
	if st := p.answered(from, to); st.P50 > p.interval().Nanoseconds() {
		return st, devbulk.Mark(ErrBad, "the %s bystander cannot keep %g/s even idle (p50 %s): its latencies would be its own backlog; give a lower rate",
			st.Op, st.Rate, result.FormatNS(st.P50))
	}
	return p.Window(from, to), nil
}

// answered summarises the operations answered so far that were due in
// [from, to), without waiting for the rest.
func (p *Prober) answered(from, to time.Time) Stats {
	return summarise(p.cfg, from, p.those(func(s sample) bool { return !s.due.Before(from) && s.due.Before(to) }))
}

// those are the operations answered so far that keep accepts.
func (p *Prober) those(keep func(sample) bool) []sample {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []sample
	for _, s := range p.samples {
		if keep(s) {
			out = append(out, s)
		}
	}
	return out
}

func (p *Prober) interval() time.Duration { return time.Duration(float64(time.Second) / p.cfg.Rate) }
