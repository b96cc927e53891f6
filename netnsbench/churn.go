package netnsbench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/devbulk/devbulk"
	"github.com/devbulk/devbulk/internal/result"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/devbulk/devbulk/internal/child"
	"github.com/devbulk/devbulk/internal/netnsstat"
	"github.com/devbulk/devbulk/kprofile"
	"github.com/devbulk/devbulk/namespace"
)

// MaxNamespaces bounds the namespaces of one run in all (the classic churn
// of 10 loops of 10000 is 100000).
const MaxNamespaces = 1000000

// ChurnOptions describe a churn: Workers in parallel, each creating,
// loading and releasing PerWorker namespaces, one at a time.
type ChurnOptions struct {
	Workers, PerWorker int
	Payload            Payload
	// Repeat is the number of rounds (default 1).
	Repeat int
	// Profile breaks the cleanup worker's time down by pernet exit handler
	// (see kprofile), each run's.
	Profile bool
	// CompareExec runs, in every round, the classic shell form as well:
	// each iteration `unshare -n sh -c SHELL`, SHELL the payload's shell
	// form (Payload.Shell: ip link set lo up, sysctl -w, ipvsadm -A).
	// The two modes alternate which goes first, round by round.
	CompareExec bool
	// ComparePayload, when set, runs in every round too, beside Payload
	// (both direct), the order alternating round by round: two payloads
	// side by side, as veth:1 against veth:1:moved.
	ComparePayload *Payload
	// SampleEvery is the backlog sampling period (default 10 ms).
	SampleEvery time.Duration
	// Counter, when set, makes a counter of the namespaces created, fed at
	// every sample.
	Counter func(label string, total int) func(done int)
}

// Report is the result document of a netns scenario.
type Report struct {
	devbulk.Header
	Scenario string `json:"scenario"` // churn, create or sequential
	Runs     []Run  `json:"runs"`
	// Comparisons (churn with CompareExec or ComparePayload, create with
	// ComparePayload) are the two forms side by side over the rounds: the
	// churn's or the creation's time, create's exec step and release, the
	// drain's, and the namespaces' setup times (p50, p99).
	Comparisons []Comparison `json:"comparisons,omitempty"`
	// Explain makes WriteTable say how figures were taken (--explain).
	Explain bool `json:"-"`
}

// Comparison is one form's times against the other's in one phase of a
// run: "churn" or "create" (CreateNS), "exec step" (ExecNS), "release"
// (ReleaseNS), "drain" (DrainNS), "setup p50" or "setup p99" (Setup).
type Comparison struct {
	Phase string `json:"phase"`
	devbulk.Comparison
}

// Run is one measured scenario run.
type Run struct {
	Mode       string `json:"mode"` // "direct" (syscalls) or "exec" (shell processes)
	Round      int    `json:"round,omitempty"`
	Workers    int    `json:"workers"`
	PerWorker  int    `json:"per_worker"`
	Namespaces int    `json:"namespaces"`
	Payload    string `json:"payload"`
	// Created is how many namespaces were made: Namespaces, unless the
	// run was Interrupted (Ctrl-C), when the rates are over Created and
	// neither release nor drain was measured.
	Created     int64 `json:"created"`
	Interrupted bool  `json:"interrupted,omitempty"`
	// CreateNS is the creation phase: in churn and sequential, from the
	// first creation to the last release (they interleave); in create,
	// until every namespace exists.
	CreateNS    int64   `json:"create_ns"`
	NetnsPerSec float64 `json:"netns_per_sec"`
	// UserNS and SysNS are the CPU time of devbulk (and, in exec mode, of
	// the processes it ran) during CreateNS.
	UserNS int64 `json:"user_ns"`
	SysNS  int64 `json:"sys_ns"`
	// KernelNS is the CPU time all CPUs spent in the kernel during CreateNS
	// (/proc/stat system+irq+softirq, 10 ms ticks), the cleanup worker's
	// included: UserNS/KernelNS compares devbulk's own work with the
	// kernel's (a ratio, not a share: the exec mode's exceeds 1).
	KernelNS int64 `json:"kernel_cpu_ns"`
	// ReleaseNS (create only) is the release of every namespace after
	// CreateNS: their unmounting.
	ReleaseNS int64 `json:"release_ns,omitempty"`
	// DrainNS runs from the last release until the kernel had freed every
	// namespace (DrainMethod); 0 when that could not be observed.
	DrainNS     int64  `json:"drain_ns"`
	DrainMethod string `json:"drain_method,omitempty"`
	// Setup is the distribution of the namespaces' setup times: unshare
	// and the payload (in create, the bind mount too; in exec mode, the
	// whole `unshare -n sh -c` process).
	Setup *Latency `json:"setup,omitempty"`
	// PeakBacklog is the most namespaces released but not yet freed at once.
	PeakBacklog int `json:"peak_backlog"`
	PeakObjects int `json:"peak_slab_objects"`
	// PeakSlabBytes is PeakObjects times the slab size of one struct net:
	// the struct itself, not the per-namespace memory hanging off it.
	PeakSlabBytes int64 `json:"peak_slab_bytes"`
	// Profile (--profile) is the cleanup worker's time by function, the
	// largest first: the pernet exit handlers, the RCU waits, the device
	// unregistering (see kprofile); shares are of WorkerNS, the time in
	// cleanup_net, and per_device_ns is per namespace.
	Profile  []kprofile.Entry `json:"profile,omitempty"`
	WorkerNS int64            `json:"worker_ns,omitempty"`
	// Rate (create only) is the creation rate curve, a point every step.
	Rate []RatePoint `json:"rate,omitempty"`
	// ExecNS, ExecPerSec and ExecRate (create with an exec step) are the
	// second phase: the command run in each kept namespace as `ip netns
	// exec` runs it, one after the other, and its rate curve.
	ExecStep   string      `json:"exec_step,omitempty"`
	ExecDone   int         `json:"exec_done,omitempty"` // namespaces the step ran in
	ExecNS     int64       `json:"exec_ns,omitempty"`
	ExecPerSec float64     `json:"exec_per_sec,omitempty"`
	ExecRate   []RatePoint `json:"exec_rate,omitempty"`
	Series     []Sample    `json:"series"`
}

// RatePoint is the creation rate over one step of the create curve.
type RatePoint struct {
	Created     int     `json:"created"`
	TNS         int64   `json:"t_ns"`
	NetnsPerSec float64 `json:"netns_per_sec"` // over the step ending here
}

// Sample is the state at one moment of a run.
type Sample struct {
	TNS      int64 `json:"t_ns"`
	Created  int64 `json:"created"`
	Released int64 `json:"released"`
	// Objects is the count of struct net beyond the baseline; Backlog is
	// Objects minus the namespaces still held (released, not yet freed).
	Objects int `json:"objects"`
	Backlog int `json:"backlog"`
}

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

// CheckCount refuses runs of more than MaxNamespaces namespaces in all, or
// with more alive at once than the user namespace's max_net_namespaces
// allows (released namespaces count until the kernel has freed them, so a
// churn that outruns the cleanup worker can still meet the limit: the
// kernel's ENOSPC then ends the run).
func CheckCount(total, alive int) error {
	if total < 1 || total > MaxNamespaces {
		return fmt.Errorf("%d namespaces in all (--workers × --per-worker, or --count) out of range: 1..%d", total, MaxNamespaces)
	}
	b, err := os.ReadFile("/proc/sys/user/max_net_namespaces")
	if err != nil {
		return nil
	}
	if limit, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && alive > limit {
		return fmt.Errorf("%d namespaces alive at once: over /proc/sys/user/max_net_namespaces, %d", alive, limit)
	}
	return nil
}

// Check refuses options out of range, before anything is made.
func (o ChurnOptions) Check() error {
	if o.CompareExec {
		if _, err := o.Payload.Shell(); err != nil {
			return fmt.Errorf("--compare exec: %w", err)
		}
		if o.ComparePayload != nil {
			return errors.New("one comparison at a time: exec or another payload")
		}
	}
	if err := checkRounds(o.Payload, o.ComparePayload, o.Repeat); err != nil {
		return err
	}
	if o.Workers < 1 || o.PerWorker < 1 || o.PerWorker > MaxNamespaces {
		return fmt.Errorf("%d workers × %d namespaces: each out of range 1..%d", o.Workers, o.PerWorker, MaxNamespaces)
	}
	alive := o.Workers // one namespace per worker, and the parent of veth payloads
	if needsParent(o.Payload, o.ComparePayload) {
		alive++
	}
	return CheckCount(o.Workers*o.PerWorker, alive)
}

// checkRounds refuses a count of rounds out of range, and a payload
// compared with itself.
func checkRounds(p Payload, compare *Payload, repeat int) error {
	if compare != nil && compare.same(p) {
		return fmt.Errorf("--compare payload:%s is the payload itself (%s)", compare.label(), p.label())
	}
	if repeat < 0 || repeat > MaxRepeat {
		return fmt.Errorf("%d rounds out of range: 1..%d", repeat, MaxRepeat)
	}
	return nil
}

// MaxRepeat bounds the rounds of one churn or create.
const MaxRepeat = 100

// Churn runs the workers and measures each run and its drain, o.Repeat
// rounds. With CompareExec or ComparePayload every round runs both forms,
// the first first in odd rounds and the other first in even ones; no run
// starts before the kernel has freed the namespaces of the one before it
// (see measure), and the report compares the forms side by side.
func Churn(ctx context.Context, o ChurnOptions) (*Report, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	var parent netns.NsHandle = -1
	if needsParent(o.Payload, o.ComparePayload) {
		var err error
		if parent, err = namespace.Unshare(); err != nil {
			return nil, err
		}
		defer parent.Close()
	}
	prof, err := newProfiler(o.Profile, o.Workers*o.PerWorker)
	if err != nil {
		return nil, err
	}
	r := &Report{Header: devbulk.NewHeader(), Scenario: "churn"}
	var seq atomic.Int64 // across runs: names in the shared parent never repeat
	err = r.interleave(ctx, o.Repeat, o.variants(), func(v variant) (Run, error) {
		return churnOnce(ctx, o, v, runEnv{parent: parent, seq: &seq, prof: prof})
	})
	return r, err
}

// interleave runs each form of vs in every one of repeat rounds (at least
// one), the first form first in odd rounds and the other first in even
// ones, and keeps the runs; with two forms the report then compares them.
// It stops at the first run that fails, and when ctx is done.
func (r *Report) interleave(ctx context.Context, repeat int, vs []variant, each func(variant) (Run, error)) error {
	for round := 1; round <= max(1, repeat); round++ {
		for i := range vs {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			v := vs[i]
			if round%2 == 0 {
				v = vs[len(vs)-1-i]
			}
			run, err := each(v)
			run.Round = round
			r.Runs = append(r.Runs, run)
			if err != nil {
				return err
			}
		}
	}
	if len(vs) == 2 {
		r.compare(vs[0].label, vs[1].label, func(run Run) string {
			if vs[0].exec != vs[1].exec {
				return run.Mode
			}
			return run.Payload
		})
	}
	return nil
}

// variant is one form a churn or create round runs: its payload, as syscalls
// (direct) or as the payload's shell form, a process per namespace (exec).
type variant struct {
	label   string // "direct", "exec", or the payload's name
	exec    bool
	payload Payload
}

// variants are the forms each round runs: the payload direct, and what it
// is compared with.
func (o ChurnOptions) variants() []variant {
	if o.CompareExec {
		return []variant{{label: "direct", payload: o.Payload}, {label: "exec", exec: true, payload: o.Payload}}
	}
	return payloadVariants(o.Payload, o.ComparePayload)
}

// payloadVariants are the payload, and the one it is compared with if any,
// both direct.
func payloadVariants(p Payload, compare *Payload) []variant {
	if compare == nil {
		return []variant{{label: "direct", payload: p}}
	}
	return []variant{{label: p.label(), payload: p}, {label: compare.label(), payload: *compare}}
}

// needsParent says whether a payload of the run pairs with a parent
// namespace.
func needsParent(p Payload, compare *Payload) bool {
	return p.needsParent || (compare != nil && compare.needsParent)
}

// runEnv is what the runs of a churn or a create share: the payloads' parent namespace,
// the namespaces' sequence number (which names their veth peers there),
// and the profiler.
type runEnv struct {
	parent netns.NsHandle
	seq    *atomic.Int64
	prof   *kprofile.Profiler
}

// churnOnce is one measured run of the workers, in one form.
func churnOnce(ctx context.Context, o ChurnOptions, v variant, env runEnv) (Run, error) {
	run := Run{Mode: "direct", Workers: o.Workers, PerWorker: o.PerWorker, Namespaces: o.Workers * o.PerWorker, Payload: v.payload.label()}
	if v.exec {
		run.Mode = "exec"
	}
	var t tally
	body := func() error {
		var wg sync.WaitGroup
		errs := make([]error, o.Workers)
		for w := 0; w < o.Workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if v.exec {
					errs[w] = execIterations(ctx, v.payload, o.PerWorker, &t)
					return
				}
				errs[w] = inFreshNamespaces(ctx, o.PerWorker, &t, func(i int) error {
					return v.payload.apply(env.parent, int(env.seq.Add(1)), i == 0)
				})
			}()
		}
		wg.Wait()
		return errors.Join(errors.Join(errs...), ctx.Err())
	}
	err := measure(ctx, &run, steps{body: body, drained: maker(o.Counter, "drain "+v.label), created: &t.created, released: &t.released,
		every: o.SampleEvery, progress: counter(o.Counter, "churn "+v.label, run.Namespaces), prof: env.prof})
	run.Setup = t.setup.latency()
	return run, err
}

// compare compares b's runs with a's (label tells a run's form): the
// churn or the creation, create's exec step and release, the drain where
// both forms saw it end, and the setup times.
func (r *Report) compare(a, b string, label func(Run) string) {
	times := func(form string, of func(Run) int64) []float64 {
		var out []float64
		for _, run := range r.Runs {
			if label(run) == form && of(run) > 0 {
				out = append(out, float64(of(run)))
			}
		}
		return out
	}
	setup := func(of func(*Latency) int64) func(Run) int64 {
		return func(r Run) int64 {
			if r.Setup == nil {
				return 0
			}
			return of(r.Setup)
		}
	}
	for _, ph := range []struct {
		name string
		of   func(Run) int64
	}{
		{r.Scenario, func(r Run) int64 { return r.CreateNS }},
		{"exec step", func(r Run) int64 { return r.ExecNS }},
		{"release", func(r Run) int64 { return r.ReleaseNS }},
		{"drain", func(r Run) int64 { return r.DrainNS }},
		{"setup p50", setup(func(l *Latency) int64 { return l.P50NS })},
		{"setup p99", setup(func(l *Latency) int64 { return l.P99NS })},
	} {
		if c := devbulk.Compare(a, b, times(a, ph.of), times(b, ph.of)); c != nil {
			r.Comparisons = append(r.Comparisons, Comparison{Phase: ph.name, Comparison: *c})
		}
	}
}

// maker is mk for one label, or nil.
func maker(mk func(string, int) func(int), label string) func(int) func(int) {
	if mk == nil {
		return nil
	}
	return func(total int) func(int) { return mk(label, total) }
}

// counter makes a counter when there is a maker.
func counter(mk func(string, int) func(int), label string, total int) func(int) {
	if mk == nil {
		return nil
	}
	return mk(label, total)
}

// tally counts a run's namespaces as they are made and released, with each
// one's setup time; its workers share it.
type tally struct {
	created, released atomic.Int64
	setup             setupTimes
}

// execIterations runs n iterations of the payload's classic shell form,
// `unshare -n sh -c SHELL`, one after the other, each a namespace.
func execIterations(ctx context.Context, p Payload, n int, t *tally) error {
	shell, err := p.Shell()
	if err != nil {
		return err // Check refuses such a payload first
	}
	for i := 0; i < n && ctx.Err() == nil; i++ {
		t.created.Add(1)
		start := time.Now()
		out, err := child.Command(ctx, "unshare", "-n", "sh", "-c", shell).CombinedOutput()
		t.released.Add(1)
		if err != nil {
			return fmt.Errorf("unshare -n: %v: %s", err, strings.TrimSpace(string(out)))
		}
		t.setup.add(time.Since(start))
	}
	return nil
}

// inFreshNamespaces calls each n times on one dedicated locked thread, every
// call inside a new network namespace that the thread leaves when the call
// returns — which releases it unless each kept a reference (a bind mount).
// It is the loop of `unshare -n CMD` without a process per iteration.
// t counts the namespaces entered and left, and gets each one's setup
// time, from unshare to each's return. It stops early, without error, when
// ctx is done.
func inFreshNamespaces(ctx context.Context, n int, t *tally, each func(i int) error) error {
	return namespace.Run(namespace.Current, func() error {
		home, err := netns.Get()
		if err != nil {
			return fmt.Errorf("open this thread's netns: %w", err)
		}
		defer home.Close()
		for i := 0; i < n && ctx.Err() == nil; i++ {
			start := time.Now()
			if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
				return fmt.Errorf("unshare(CLONE_NEWNET): %w", err)
			}
			t.created.Add(1)
			err := each(i)
			if err == nil {
				t.setup.add(time.Since(start))
			}
			if serr := netns.Set(home); serr != nil {
				return errors.Join(err, fmt.Errorf("setns back: %w", serr))
			}
			t.released.Add(1)
			if err != nil {
				return err
			}
		}
		return nil
	})
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

// SequentialOptions describe the single-threaded loop: Count namespaces;
// Profile as ChurnOptions'.
type SequentialOptions struct {
	Count   int
	Profile bool
	// Counter, when set, makes a counter of the namespaces created.
	Counter func(label string, total int) func(done int)
}

// Sequential is the single-threaded `unshare -n` loop: one thread makes n
// namespaces one after the other; each unshare releases the previous one.
// CreateNS and the CPU time are the creation loop; DrainNS the dismantling
// that the loop left to the kernel.
func Sequential(ctx context.Context, o SequentialOptions) (*Report, error) {
	n := o.Count
	if err := CheckCount(n, 1); err != nil {
		return nil, err
	}
	prof, err := newProfiler(o.Profile, n)
	if err != nil {
		return nil, err
	}
	r := &Report{Header: devbulk.NewHeader(), Scenario: "sequential"}
	run := Run{Mode: "direct", Workers: 1, PerWorker: n, Namespaces: n, Payload: "none"}
	var created, released atomic.Int64
	body := func() error {
		return namespace.Run(namespace.Current, func() error {
			for i := 0; i < n && ctx.Err() == nil; i++ {
				if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
					return fmt.Errorf("unshare(CLONE_NEWNET): %w", err)
				}
				if created.Add(1) > 1 {
					released.Add(1)
				}
			}
			return ctx.Err()
		}) // the thread goes home: the last namespace is released
	}
	err = measure(ctx, &run, steps{body: func() error {
		err := body()
		released.Store(created.Load())
		return err
	}, drained: maker(o.Counter, "drain"), created: &created, released: &released,
		progress: counter(o.Counter, "sequential", n), prof: prof})
	r.Runs = append(r.Runs, run)
	return r, err
}
