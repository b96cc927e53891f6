package bisect

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// Measurer boots one kernel configuration once and measures the scenario
// there: every benchmark's samples (ns per device, or per namespace) by
// name. An error that matches ErrNoBoot makes the step a skip.
type Measurer interface {
	Measure(ctx context.Context, spec string, timeout time.Duration) (map[string][]float64, error)
}

// ErrNoBoot marks a kernel that did not boot, hung past its timeout, or
// could not run the scenario: the step is skipped, the search goes on.
var ErrNoBoot = errors.New("kernel did not run the scenario")

// Options are a bisection's list and rules.
type Options struct {
	// Specs are the kernel configurations in order: the first known good,
	// the last known bad.
	Specs []string
	// Metric chooses the benchmark that decides: the first whose name
	// starts with it.
	Metric string
	// ThresholdPct is the least change of the metric that counts.
	ThresholdPct float64
	// EndBoots boots each end this many times, alternating (default 2);
	// StepBoots each candidate at first (default 1), MaxBoots at most
	// (default 3); ConfirmBoots each of the answer's two kernels again,
	// alternating (default 2).
	EndBoots, StepBoots, MaxBoots, ConfirmBoots int
	// Revert, when set, names the bad end with the first bad kernel's
	// change reverted (a list of commits: the commit), measured after the
	// confirmation beside the last good kernel and the bad end
	// (RevertCheck); "" when there is nothing to revert.
	Revert func(firstBad string) string
	// Progress, when set, receives a line before each boot.
	Progress func(string)
	// Log, when set, holds boots measured before (a bisection resumed) and
	// receives each new one as it finishes.
	Log *Log
}

func (o *Options) defaults() {
	o.EndBoots, o.StepBoots = cmpOr(o.EndBoots, 2), cmpOr(o.StepBoots, 1)
	o.MaxBoots, o.ConfirmBoots = max(cmpOr(o.MaxBoots, 3), o.StepBoots), cmpOr(o.ConfirmBoots, 2)
	if o.Log == nil {
		o.Log = &Log{}
	}
}

func cmpOr(v, def int) int {
	if v > 0 {
		return v
	}
	return def
}

// Result is a bisection's outcome.
type Result struct {
	Specs  []string `json:"specs"`
	Metric string   `json:"metric"` // the benchmark that decided
	// Ends is the bad end against the good one, boots alternating.
	Ends Change `json:"ends"`
	// Found: the ends differ and the search named a last good and a
	// first bad kernel (indexes in Specs); Confirmed: measured again,
	// alternating, they still differ (Confirmation).
	Found        bool    `json:"found"`
	LastGood     int     `json:"last_good"`
	FirstBad     int     `json:"first_bad"`
	Confirmed    bool    `json:"confirmed"`
	Confirmation *Change `json:"confirmation,omitempty"`
	// Between lists the skipped kernels between LastGood and FirstBad:
	// the first bad one is FirstBad or one of them.
	Between []int  `json:"between,omitempty"`
	Steps   []Step `json:"steps"`
	// Samples are every benchmark's samples per kernel, all boots.
	Samples map[int]map[string][]float64 `json:"samples"`
	// Confirm holds the confirmation's own samples of the two kernels.
	Confirm map[int]map[string][]float64 `json:"confirm_samples,omitempty"`
	// Revert is the first bad commit reverted on the bad end, measured
	// (Options.Revert).
	Revert *RevertCheck `json:"revert,omitempty"`
	Boots  int          `json:"boots"`
	WallNS int64        `json:"wall_ns"`
}

// Step is one kernel the search decided on.
type Step struct {
	Index   int     `json:"index"`
	Spec    string  `json:"spec"`
	Verdict Verdict `json:"verdict"`
	Why     string  `json:"why"`
	Boots   int     `json:"boots"`
	Samples int     `json:"samples"`
	WallNS  int64   `json:"wall_ns"`
}

// Run bisects: the two ends side by side first (it stops there when they
// do not differ significantly by more than the threshold), then a binary
// search whose every step compares the candidate with both ends, adding
// boots while it is inconclusive and skipping a kernel that does not
// boot, then the answer's two kernels again, alternating. Boots already in
// o.Log are not repeated. When ctx ends it returns what was decided and
// ctx's error.
func Run(ctx context.Context, m Measurer, o Options) (*Result, error) {
	if len(o.Specs) < 2 {
		return nil, fmt.Errorf("a bisection needs at least two kernel configurations, got %d", len(o.Specs))
	}
	o.defaults()
	b := &bisection{m: m, o: o, start: time.Now(), r: &Result{Specs: o.Specs, Samples: map[int]map[string][]float64{}}}
	err := b.run(ctx)
	b.r.WallNS = int64(time.Since(b.start))
	return b.r, err
}

type bisection struct {
	m       Measurer
	o       Options
	r       *Result
	start   time.Time
	longest time.Duration // the longest boot so far: a hung one is stopped at a few times that
}

func (b *bisection) run(ctx context.Context) error {
	n := len(b.o.Specs)
	for i := range b.o.EndBoots {
		order := []int{0, n - 1}
		if i%2 == 1 {
			slices.Reverse(order)
		}
		for _, k := range order {
			if err := b.boot(ctx, "ends", k, b.r.Samples); err != nil {
				return fmt.Errorf("the %s end, %s: %w", endName(k), b.o.Specs[k], err)
			}
		}
	}
	var err error
	if b.r.Metric, err = b.metric(); err != nil {
		return err
	}
	if b.r.Ends, err = Compare(b.sample(0), b.sample(n-1), b.o.ThresholdPct); err != nil || !b.r.Ends.Significant {
		return err
	}
	if err := b.search(ctx); err != nil || !b.r.Found {
		return err
	}
	if err := b.confirm(ctx); err != nil {
		return err
	}
	return b.revert(ctx)
}

func endName(k int) string {
	if k == 0 {
		return "good"
	}
	return "bad"
}

// metric is the benchmark that decides: the first of the good end's whose
// name starts with the option's.
func (b *bisection) metric() (string, error) {
	var names []string
	for name := range b.r.Samples[0] {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if strings.HasPrefix(name, b.o.Metric) {
			return name, nil
		}
	}
	return "", fmt.Errorf("no benchmark of the scenario starts with %q (measured: %s)", b.o.Metric, strings.Join(names, ", "))
}

func (b *bisection) sample(k int) []float64 { return b.r.Samples[k][b.r.Metric] }

// search narrows lo (good) and hi (bad) down to neighbours, skipped
// kernels aside.
func (b *bisection) search(ctx context.Context) error {
	lo, hi := 0, len(b.o.Specs)-1
	skipped := map[int]bool{}
	for {
		k, ok := pick(lo, hi, skipped)
		if !ok {
			break
		}
		v, err := b.step(ctx, k)
		if err != nil {
			return err
		}
		switch v {
		case Good:
			lo = k
		case Bad:
			hi = k
		default:
			skipped[k] = true
		}
	}
	b.r.Found, b.r.LastGood, b.r.FirstBad = true, lo, hi
	for k := lo + 1; k < hi; k++ {
		b.r.Between = append(b.r.Between, k)
	}
	return nil
}

// pick is the untested kernel between lo and hi nearest their middle;
// false when none is left.
func pick(lo, hi int, skipped map[int]bool) (int, bool) {
	mid := (lo + hi) / 2
	for d := 0; d < hi-lo; d++ {
		for _, k := range []int{mid - d, mid + d + 1} {
			if k > lo && k < hi && !skipped[k] {
				return k, true
			}
		}
	}
	return 0, false
}

// step boots candidate k until its figures decide, or MaxBoots.
func (b *bisection) step(ctx context.Context, k int) (Verdict, error) {
	start, boots := time.Now(), 0
	st := Step{Index: k, Spec: b.o.Specs[k], Verdict: Inconclusive}
	for boots < b.o.MaxBoots && st.Verdict == Inconclusive {
		err := b.boot(ctx, "step", k, b.r.Samples)
		boots++
		if errors.Is(err, ErrNoBoot) {
			st.Verdict, st.Why = Skip, err.Error()
			break
		}
		if err != nil {
			return Skip, err
		}
		if boots < b.o.StepBoots {
			continue
		}
		if st.Verdict, st.Why, err = Decide(b.sample(0), b.sample(len(b.o.Specs)-1), b.sample(k), b.o.ThresholdPct); err != nil {
			st.Verdict, st.Why = Inconclusive, err.Error() // too few samples yet
		}
	}
	if st.Verdict == Inconclusive {
		st.Verdict, st.Why = Skip, fmt.Sprintf("inconclusive after %d boots: %s", boots, st.Why)
	}
	st.Boots, st.Samples, st.WallNS = boots, len(b.sample(k)), int64(time.Since(start))
	b.r.Steps = append(b.r.Steps, st)
	return st.Verdict, nil
}

// confirm measures the last good and first bad kernels again, alternating,
// into samples of their own: the answer stands only if they still differ.
func (b *bisection) confirm(ctx context.Context) error {
	b.r.Confirm = map[int]map[string][]float64{}
	pair := []int{b.r.LastGood, b.r.FirstBad}
	for i := range b.o.ConfirmBoots {
		order := slices.Clone(pair)
		if i%2 == 1 {
			slices.Reverse(order)
		}
		for _, k := range order {
			if err := b.boot(ctx, "confirm", k, b.r.Confirm); err != nil {
				return fmt.Errorf("confirming with %s: %w", b.o.Specs[k], err)
			}
		}
	}
	c, err := Compare(b.r.Confirm[pair[0]][b.r.Metric], b.r.Confirm[pair[1]][b.r.Metric], b.o.ThresholdPct)
	if err != nil {
		return err
	}
	// The same direction as the ends', significant again.
	b.r.Confirmation, b.r.Confirmed = &c, c.Significant && (c.Ratio > 1) == (b.r.Ends.Ratio > 1)
	return nil
}

// boot measures kernel k once (or takes the boot the log holds), adding
// its samples to into.
func (b *bisection) boot(ctx context.Context, phase string, k int, into map[int]map[string][]float64) error {
	spec := b.spec(k)
	rec, ok := b.o.Log.next(phase, spec)
	if !ok {
		if b.o.Progress != nil {
			b.o.Progress(b.progress(phase, spec))
		}
		t := time.Now()
		samples, err := b.m.Measure(ctx, spec, b.timeout())
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case err != nil && !errors.Is(err, ErrNoBoot):
			return err // this machine's trouble, not the kernel's: not logged, a rerun boots again
		}
		rec = Boot{Phase: phase, Spec: spec, Samples: samples, WallNS: int64(time.Since(t))}
		if err != nil {
			rec.Err = strings.TrimPrefix(err.Error(), ErrNoBoot.Error()+": ") // said once, when the step reads it
		}
		if err := b.o.Log.add(rec); err != nil {
			return err
		}
	}
	b.r.Boots++
	if rec.Err != "" {
		return fmt.Errorf("%w: %s", ErrNoBoot, rec.Err)
	}
	b.longest = max(b.longest, time.Duration(rec.WallNS)) // a hung boot's time would raise the next timeout
	if into[k] == nil {
		into[k] = map[string][]float64{}
	}
	for name, v := range rec.Samples {
		into[k][name] = append(into[k][name], v...)
	}
	return nil
}

// timeout is how long a boot may take before it counts as hung: four
// times the longest so far, and at least 3 minutes (TCG, a cold cache).
func (b *bisection) timeout() time.Duration {
	return max(4*b.longest, 3*time.Minute)
}

// progress says where the bisection is and about how long is left: the
// search takes about log2 of the kernels left to decide, each a boot.
func (b *bisection) progress(phase, spec string) string {
	left := ""
	if b.r.Boots > 0 {
		steps := math.Ceil(math.Log2(float64(len(b.o.Specs) - 1)))
		per := time.Since(b.start) / time.Duration(b.r.Boots)
		total := 2*b.o.EndBoots + int(steps)*b.o.StepBoots + 2*b.o.ConfirmBoots
		if b.o.Revert != nil {
			total += 3 * b.o.ConfirmBoots
		}
		left = fmt.Sprintf(", about %s left", (per * time.Duration(max(total-b.r.Boots, 1))).Round(time.Second))
	}
	if phase == "step" {
		phase = fmt.Sprintf("step %d of about %.0f", len(b.r.Steps)+1, math.Ceil(math.Log2(float64(len(b.o.Specs)-1))))
	}
	return fmt.Sprintf("bisect: %s, boot %d (%s%s)", phase, b.r.Boots+1, spec, left)
}
