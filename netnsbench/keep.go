package netnsbench

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/vishvananda/netns"

	"github.com/devbulk/devbulk"
	"github.com/devbulk/devbulk/namespace"
)

// KeepOptions describe `netns create`: Count namespaces made one after
// the other, each given the Payload and kept, bind-mounted under
// o.MountDir; then, with ExecStep, a command run in each; then all
// released.
type KeepOptions struct {
	Count int
	// Payload is applied to each namespace once it is kept (zero: none).
	Payload Payload
	// ExecStep, when set, is run in every kept namespace after they are
	// all made, the way `ip netns exec NAME sh -c CMD` runs it (see
	// netnsExec): a phase of its own, with its own rate curve.
	ExecStep string
	// Step is the rate curves' step in namespaces (default Count/20, at
	// least 1).
	Step        int
	SampleEvery time.Duration
	// Counter, when set, makes a counter of the namespaces created.
	Counter func(label string, total int) func(done int)
	// MountDir is where the kept namespaces are bind-mounted (""
	// namespace.DefaultPinDir); namespace.CleanupPinned(MountDir) removes a killed run's.
	MountDir string
	// Profile breaks the cleanup worker's time down (see ChurnOptions).
	Profile bool
	// ComparePayload, when set, is kept too, in runs of its own beside
	// Payload's, the order alternating round by round (as ChurnOptions'):
	// veth:1 against veth:1:moved with every namespace kept.
	ComparePayload *Payload
	// Repeat is the number of rounds (default 1); each round releases its
	// namespaces and waits for the drain before the next run starts.
	Repeat int
}

// Check refuses options out of range, before anything is made.
func (o KeepOptions) Check() error {
	if o.Step < 0 || o.Step > o.Count {
		return fmt.Errorf("step %d out of range: 1..%d (the count)", o.Step, o.Count)
	}
	if o.ExecStep != "" && strings.TrimSpace(o.ExecStep) == "" {
		return errors.New("--exec-step: an empty command")
	}
	if err := checkRounds(o.Payload, o.ComparePayload, o.Repeat); err != nil {
		return err
	}
	alive := o.Count // and the veth peers' parent
	if needsParent(o.Payload, o.ComparePayload) {
		alive++
	}
	return CheckCount(o.Count, alive)
}

// Keep makes and keeps o.Count namespaces, recording the creation rate
// every o.Step, runs the exec step in each, then releases them all and
// measures the drain: o.Repeat rounds, each of both payloads with
// o.ComparePayload (see Report.interleave). Whatever it made is released
// before it returns, on error and on cancellation too; a devbulk killed
// meanwhile leaves mounts that Cleanup removes.
func Keep(ctx context.Context, o KeepOptions) (*Report, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	if o.Step <= 0 {
		o.Step = max(1, o.Count/20)
	}
	parent := netns.None()
	if needsParent(o.Payload, o.ComparePayload) {
		var err error
		if parent, err = namespace.Unshare(); err != nil {
			return nil, err
		}
		defer parent.Close()
	}
	prof, err := newProfiler(o.Profile, o.Count)
	if err != nil {
		return nil, err
	}
	r := &Report{Header: devbulk.NewHeader(), Scenario: "create"}
	var seq atomic.Int64 // across runs: names in the shared parent never repeat
	err = r.interleave(ctx, o.Repeat, payloadVariants(o.Payload, o.ComparePayload), func(v variant) (Run, error) {
		return keepOnce(ctx, o, v.payload, runEnv{parent: parent, seq: &seq, prof: prof})
	})
	return r, err
}

// keepOnce is one measured run of Keep, with payload p.
func keepOnce(ctx context.Context, o KeepOptions, p Payload, env runEnv) (Run, error) {
	run := Run{Mode: "direct", Workers: 1, PerWorker: o.Count, Namespaces: o.Count, Payload: p.label(), ExecStep: o.ExecStep}
	m, err := namespace.NewPinned(o.MountDir)
	if err != nil {
		return run, err
	}
	k := &keeper{o: o, payload: p, m: m, env: env, run: run}
	st := steps{body: func() error { return k.body(ctx) }, release: k.release, drained: maker(o.Counter, k.named("drain")),
		created: &k.created, released: &k.released, every: o.SampleEvery, progress: counter(o.Counter, k.named("create"), o.Count), prof: env.prof}
	if o.ExecStep != "" {
		st.exec = func() error { return k.exec(ctx) }
	}
	err = measure(ctx, &k.run, st)
	if _, rerr := m.Remove(); rerr != nil { // after a failed release: whatever is left
		err = errors.Join(err, rerr)
	}
	return k.run, err
}

// keeper is Keep's run under way.
type keeper struct {
	o                 KeepOptions
	payload           Payload
	m                 *namespace.Pinned
	env               runEnv // the veth payloads' parent (or none), their names' sequence
	run               Run
	created, released atomic.Int64
}

// named is a counter's name: what, and the payload when runs of another
// payload are beside this one.
func (k *keeper) named(what string) string {
	if k.o.ComparePayload == nil {
		return what
	}
	return what + " " + k.run.Payload
}

// body makes and keeps the namespaces, counted once mounted: release
// unmounts what was counted.
func (k *keeper) body(ctx context.Context) error {
	curve := newCurve(k.o.Step, k.o.Count)
	var t tally // keep counts what it pinned itself
	defer func() { k.run.Setup = t.setup.latency() }()
	err := inFreshNamespaces(ctx, k.o.Count, &t, func(i int) error {
		if err := k.m.Pin(i); err != nil {
			return err
		}
		k.created.Add(1)
		if k.payload.items != nil {
			if err := k.payload.apply(k.env.parent, int(k.env.seq.Add(1)), i == 0); err != nil {
				return err
			}
		}
		curve.point(int(k.created.Load()))
		return nil
	})
	k.run.Rate = curve.points
	return errors.Join(err, ctx.Err())
}

// release unmounts every namespace kept.
func (k *keeper) release() error {
	for i := range int(k.created.Load()) {
		if err := k.m.Unpin(i); err != nil {
			return err
		}
		k.released.Add(1)
	}
	return nil
}

// exec runs the exec step in each kept namespace, timed with its curve.
func (k *keeper) exec(ctx context.Context) error {
	curve, start := newCurve(k.o.Step, k.o.Count), time.Now()
	done := 0
	defer func() {
		k.run.ExecDone = done
		elapsed := time.Since(start)
		k.run.ExecNS, k.run.ExecRate = elapsed.Nanoseconds(), curve.points
		k.run.ExecPerSec = float64(done) / elapsed.Seconds()
	}()
	n := int(k.created.Load())
	bar := counter(k.o.Counter, k.named("exec step"), n)
	for ; done < n && ctx.Err() == nil; done++ {
		if err := netnsExec(ctx, k.m.Path(done), k.o.ExecStep); err != nil {
			if ctx.Err() != nil {
				break // the step was killed by the interruption, not failed
			}
			return fmt.Errorf("exec step in namespace %d: %w", done, err)
		}
		curve.point(done + 1)
		if bar != nil {
			bar(done + 1)
		}
	}
	k.run.Interrupted = k.run.Interrupted || ctx.Err() != nil
	return ctx.Err()
}

// curve records a rate curve: a point every step, and at the last.
type curve struct {
	step, last int
	start, at  time.Time
	points     []RatePoint
}

func newCurve(step, last int) *curve {
	now := time.Now()
	return &curve{step: step, last: last, start: now, at: now}
}

// point notes that n are done.
func (c *curve) point(n int) {
	if n%c.step != 0 && n != c.last {
		return
	}
	now := time.Now()
	c.points = append(c.points, RatePoint{Created: n, TNS: now.Sub(c.start).Nanoseconds(),
		NetnsPerSec: float64(n-prevCreated(c.points)) / now.Sub(c.at).Seconds()})
	c.at = now
}

func prevCreated(rate []RatePoint) int {
	if len(rate) == 0 {
		return 0
	}
	return rate[len(rate)-1].Created
}
