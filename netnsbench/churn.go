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

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/devbulk/devbulk/internal/child"
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
