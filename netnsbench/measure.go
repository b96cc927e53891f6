package netnsbench

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/devbulk/devbulk/internal/netnsstat"
	"github.com/devbulk/devbulk/internal/result"
	"github.com/devbulk/devbulk/kprofile"
	"github.com/devbulk/devbulk/namespace"
)

// This file is the measuring engine every scenario shares: a run timed step
// by step, its samples, its profile, and the kernel's drain after it.

// DrainMethod says how the end of the drain is seen.
const DrainMethod = "the netns cleanup worker idle (no kworker comm \"+netns\") for 50 ms after the last release, " +
	"polled every 2 ms; confirmed afterwards by the net_namespace slab count back to its value before the run " +
	"once one more empty namespace has been dismantled (kernels free a cleanup run's struct net at the next run)"

// idleFor is how long the cleanup worker must stay idle to call the drain over.
const idleFor = 50 * time.Millisecond

// kickAndCount dismantles one empty namespace, which makes the kernel free
// the struct net that the last cleanup run left, and returns how many more
// than base are still allocated after up to 10 s.
func kickAndCount(base int) int {
	if ns, err := namespace.Unshare(); err == nil {
		ns.Close()
	}
	left := 0
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		c, ok := netnsstat.Objects()
		if !ok {
			return 0
		}
		// The kick's own struct net may stay deferred.
		if left = c - base - 1; left <= 0 && !netnsstat.WorkerBusy() {
			return 0
		}
	}
	return left
}

// steps are what measure runs: body (the creation phase, timed as
// CreateNS), exec (nil, or a phase that times itself: Keep's exec step),
// and release (nil, or the release of what body kept, ReleaseNS).
type steps struct {
	body, exec, release func() error
	// drained, when set, makes a counter of the namespaces the kernel has
	// freed out of total, fed while measure waits for the drain.
	drained func(total int) func(done int)
	// created and released count the namespaces as the steps make and
	// release them.
	created, released *atomic.Int64
	// every is the backlog's sampling period (0: 10 ms).
	every time.Duration
	// progress, when set, gets the count created on every sample.
	progress func(int)
	// prof, when set, profiles the cleanup worker from the start to the
	// end of the drain.
	prof *kprofile.Profiler
}

// measure runs st.body (the creation phase) with the backlog sampler, then
// st.exec and st.release when there are any, then waits for the drain.
func measure(ctx context.Context, run *Run, st steps) (err error) {
	if st.every <= 0 {
		st.every = 10 * time.Millisecond
	}
	namespace.Prime()
	netnsstat.WaitWorkerIdle(time.Minute)
	if st.prof != nil {
		if err := st.prof.Start(); err != nil {
			return err
		}
		defer func() { err = errors.Join(err, run.profiled(st.prof)) }()
	}
	smp := startSampler(run, st)
	body := st.body
	st.body = func() error {
		defer smp.creating.Store(false) // the creation's counter stops with it
		return body()
	}
	err = run.timeSteps(ctx, st)
	if ctx.Err() != nil { // interrupted: released, not waited for
		smp.stop()
		return run.interrupted(err)
	}
	if !smp.ok {
		smp.stop()
		return err
	}
	if st.drained != nil {
		d := st.drained(int(st.released.Load()))
		smp.drain.Store(&d)
	}
	if run.waitDrain(ctx); ctx.Err() != nil {
		smp.stop()
		return run.interrupted(err)
	}
	if run.DrainMethod != "" {
		if left := kickAndCount(smp.base); left > 0 {
			err = errors.Join(err, fmt.Errorf("%d namespaces still allocated after the drain and a kick", left))
		}
	}
	smp.stop()
	run.sample(smp.start, smp.base, smp.slabSize, st.created.Load(), st.released.Load())
	return err
}

// interrupted marks the run interrupted (Ctrl-C) and adds the
// interruption to its error, once.
func (run *Run) interrupted(err error) error {
	run.Interrupted = true
	if errors.Is(err, context.Canceled) {
		return err
	}
	return errors.Join(err, context.Canceled)
}

// profiled stops the profile and keeps it, with the cleanup worker's time.
func (run *Run) profiled(prof *kprofile.Profiler) error {
	pr, err := prof.Stop(0, run.Namespaces) // shares of the worker's time
	if err != nil {
		return fmt.Errorf("--profile: %w", err)
	}
	run.Profile = pr.Entries
	for _, e := range pr.Entries {
		if e.Function == "cleanup_net" {
			run.WorkerNS = e.InclusiveNS
		}
	}
	return nil
}

// sampler ticks while measure runs: progress on every tick, and backlog
// samples where the slab can be read (ok).
type sampler struct {
	start          time.Time
	base, slabSize int
	ok             bool
	creating       atomic.Bool
	drain          atomic.Pointer[func(int)]
	done           chan struct{}
	wg             sync.WaitGroup
}

func startSampler(run *Run, st steps) *sampler {
	smp := &sampler{slabSize: netnsstat.SlabSize(), done: make(chan struct{})}
	smp.base, smp.ok = netnsstat.Objects()
	smp.start = time.Now()
	smp.creating.Store(true)
	smp.wg.Go(func() {
		tick := time.NewTicker(st.every)
		defer tick.Stop()
		for {
			select {
			case <-smp.done:
				return
			case <-tick.C:
				if smp.ok {
					run.sample(smp.start, smp.base, smp.slabSize, st.created.Load(), st.released.Load())
				}
				if st.progress != nil && smp.creating.Load() {
					st.progress(int(st.created.Load()))
				}
				if d := smp.drain.Load(); d != nil && len(run.Series) > 0 {
					(*d)(int(st.released.Load()) - run.Series[len(run.Series)-1].Backlog) // freed so far
				}
			}
		}
	})
	return smp
}

func (smp *sampler) stop() {
	close(smp.done)
	smp.wg.Wait()
}

// timeSteps runs the body, timed with the CPU it cost, then exec and
// release.
func (run *Run) timeSteps(ctx context.Context, st steps) error {
	start := time.Now()
	user0, sys0 := result.CPU(true)
	kbefore, _ := netnsstat.KernelCPU()
	err := st.body()
	run.CreateNS = time.Since(start).Nanoseconds()
	run.Created, run.Interrupted = st.created.Load(), ctx.Err() != nil
	if st.progress != nil {
		st.progress(int(st.created.Load()))
	}
	user1, sys1 := result.CPU(true)
	kafter, _ := netnsstat.KernelCPU()
	run.UserNS, run.SysNS, run.KernelNS = user1-user0, sys1-sys0, int64(kafter-kbefore)
	if n := st.created.Load(); n > 0 {
		run.NetnsPerSec = float64(n) / time.Duration(run.CreateNS).Seconds()
	}
	if st.exec != nil && err == nil && ctx.Err() == nil {
		err = st.exec()
	}
	if st.release != nil {
		t := time.Now()
		err = errors.Join(err, st.release())
		run.ReleaseNS = time.Since(t).Nanoseconds()
	}
	return err
}

// waitDrain waits until the cleanup worker has been idle for idleFor after
// the last release. The kernel frees the struct net of a cleanup run's
// namespaces only at the start of the next run, so the slab count alone
// never comes back; one empty namespace released afterwards (a "kick")
// starts that run, and the count then confirms that nothing was left.
func (run *Run) waitDrain(ctx context.Context) {
	released0 := time.Now()
	idleSince := time.Time{}
	deadline := released0.Add(10 * time.Minute)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		now := time.Now()
		if netnsstat.WorkerBusy() {
			idleSince = time.Time{}
		} else if idleSince.IsZero() {
			idleSince = now
		} else if now.Sub(idleSince) >= idleFor {
			run.DrainNS = idleSince.Sub(released0).Nanoseconds()
			run.DrainMethod = DrainMethod
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func (run *Run) sample(start time.Time, base, slabSize int, created, released int64) {
	c, ok := netnsstat.Objects()
	if !ok {
		return
	}
	s := Sample{TNS: time.Since(start).Nanoseconds(), Created: created, Released: released, Objects: c - base}
	s.Backlog = max(0, s.Objects-int(created-released))
	run.Series = append(run.Series, s)
	run.PeakBacklog = max(run.PeakBacklog, s.Backlog)
	run.PeakObjects = max(run.PeakObjects, c)
	run.PeakSlabBytes = int64(run.PeakObjects) * int64(slabSize)
}
