package bisect

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// fake measures kernels whose serial delete takes ms[spec] milliseconds,
// with a few percent of spread from boot to boot; a spec in dead does not
// boot.
type fake struct {
	ms    map[string]float64
	dead  map[string]bool
	boots []string
}

func (f *fake) Measure(_ context.Context, spec string, _ time.Duration) (map[string][]float64, error) {
	f.boots = append(f.boots, spec)
	if f.dead[spec] {
		return nil, fmt.Errorf("%w: %s: no boot", ErrNoBoot, spec)
	}
	var v []float64
	for i := range 4 {
		v = append(v, f.ms[spec]*1e6*(1+0.01*float64((len(f.boots)*7+i*3)%5)))
	}
	return map[string][]float64{"Delete/kind=dummy/strategy=serial/n=100": v, "Create/kind=dummy/strategy=pipelined/n=100": {1e5, 1.1e5, 0.9e5, 1e5}}, nil
}

func planted(n, firstBad int) (*fake, []string) {
	f := &fake{ms: map[string]float64{}, dead: map[string]bool{}}
	var specs []string
	for i := range n {
		spec := fmt.Sprintf("k%d", i)
		specs = append(specs, spec)
		f.ms[spec] = 17
		if i >= firstBad {
			f.ms[spec] = 57
		}
	}
	return f, specs
}

func TestFindsThePlantedRegression(t *testing.T) {
	for _, c := range []struct{ n, firstBad int }{{6, 3}, {8, 1}, {8, 7}, {11, 5}, {2, 1}} {
		f, specs := planted(c.n, c.firstBad)
		r, err := Run(context.Background(), f, Options{Specs: specs, Metric: "Delete/", ThresholdPct: 25})
		if err != nil || !r.Found || !r.Confirmed || r.FirstBad != c.firstBad || r.LastGood != c.firstBad-1 {
			t.Fatalf("%d kernels, first bad %d: found %v confirmed %v last good %d first bad %d, %v", c.n, c.firstBad, r.Found, r.Confirmed, r.LastGood, r.FirstBad, err)
		}
		steps := len(r.Steps)
		if want := ceilLog2(c.n - 1); steps > want {
			t.Errorf("%d kernels: %d steps, want at most %d", c.n, steps, want)
		}
		if !strings.Contains(r.Words("dummy-serial"), fmt.Sprintf("regression of Delete/kind=dummy/strategy=serial/n=100 (dummy-serial) between k%d (last good) and k%d (first bad); confirmed", c.firstBad-1, c.firstBad)) {
			t.Errorf("words: %s", r.Words("dummy-serial"))
		}
	}
}

func ceilLog2(n int) int {
	k := 0
	for 1<<k < n {
		k++
	}
	return k
}

// Ends that do not differ: no search, the figures said.
func TestEndsThatDoNotDifferStop(t *testing.T) {
	f, specs := planted(6, 6) // none bad
	r, err := Run(context.Background(), f, Options{Specs: specs, Metric: "Delete/", ThresholdPct: 25})
	if err != nil || r.Found || len(r.Steps) != 0 || len(f.boots) != 4 || !strings.Contains(r.Words("s"), "no significant change") {
		t.Errorf("found %v, %d steps, %d boots, %v: %s", r.Found, len(r.Steps), len(f.boots), err, r.Words("s"))
	}
}

// A kernel that does not boot is skipped and the search goes on around it.
func TestSkipsAKernelThatDoesNotBoot(t *testing.T) {
	f, specs := planted(8, 5)
	f.dead["k3"], f.dead["k4"] = true, true
	r, err := Run(context.Background(), f, Options{Specs: specs, Metric: "Delete/", ThresholdPct: 25})
	if err != nil || !r.Found || r.FirstBad != 5 {
		t.Fatalf("found %v first bad %d: %v", r.Found, r.FirstBad, err)
	}
	skips := 0
	for _, st := range r.Steps {
		if st.Verdict == Skip {
			skips++
		}
	}
	if skips == 0 || r.LastGood != 2 || !slices.Equal(r.Between, []int{3, 4}) {
		t.Errorf("last good %d, between %v, steps %+v; want 2, [3 4]: the dead kernels named", r.LastGood, r.Between, r.Steps)
	}
}

// Killed mid-bisection, the same bisection resumes from its log and boots
// nothing it had measured.
func TestResumesFromItsLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.json")
	f, specs := planted(8, 6)
	l, err := OpenLog(path, "k")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopAfter := 6
	stopping := &stopper{fake: f, after: stopAfter, cancel: cancel}
	if _, err := Run(ctx, stopping, Options{Specs: specs, Metric: "Delete/", ThresholdPct: 25, Log: l}); err == nil {
		t.Fatal("an interrupted bisection ended without an error")
	}
	again, err := OpenLog(path, "k")
	if err != nil || again.Resumed() != stopAfter {
		t.Fatalf("log after the stop: %d boots, %v", again.Resumed(), err)
	}
	f2, _ := planted(8, 6)
	r, err := Run(context.Background(), f2, Options{Specs: specs, Metric: "Delete/", ThresholdPct: 25, Log: again})
	if err != nil || !r.Confirmed || r.FirstBad != 6 {
		t.Fatalf("resumed: confirmed %v first bad %d, %v", r.Confirmed, r.FirstBad, err)
	}
	if len(f2.boots)+stopAfter != r.Boots {
		t.Errorf("resumed bisection booted %d, logged %d, %d in all", len(f2.boots), stopAfter, r.Boots)
	}
	if other, _ := OpenLog(path, "another"); other.Resumed() != 0 {
		t.Errorf("a bisection with other options took this one's %d boots", other.Resumed())
	}
}

// stopper cancels the bisection after a number of boots, as Ctrl-C would.
type stopper struct {
	*fake
	after  int
	cancel func()
}

func (s *stopper) Measure(ctx context.Context, spec string, d time.Duration) (map[string][]float64, error) {
	if len(s.boots) == s.after {
		s.cancel()
		return nil, ctx.Err()
	}
	return s.fake.Measure(ctx, spec, d)
}

func TestDecide(t *testing.T) {
	good := []float64{17, 17.2, 16.9, 17.1, 17.3, 16.8}
	bad := []float64{57, 56, 58, 57.5, 56.5, 57.2}
	for _, c := range []struct {
		cand []float64
		want Verdict
	}{
		{[]float64{17.1, 16.9, 17.2, 17}, Good},
		{[]float64{57.1, 56.9, 57.2, 57}, Bad},
		{[]float64{45, 46, 44, 45.5}, Bad},    // apart from both, nearer bad
		{[]float64{20, 21, 19.5, 20.5}, Good}, // apart from both, nearer good
		{[]float64{17, 57}, Inconclusive},     // too few, and like both
		// 3% from the good end, significantly: under the threshold, so
		// like it; far from the bad end.
		{[]float64{17.6, 17.55, 17.65, 17.6}, Good},
	} {
		if v, why, _ := Decide(good, bad, c.cand, 25); v != c.want {
			t.Errorf("%v: %s (%s), want %s", c.cand, v, why, c.want)
		}
	}
	// A review's case: a bimodal bad end that a candidate 3% off the good
	// end does not differ from; a p-value alone called it bad.
	bimodal := []float64{17, 17.1, 17.2, 57, 57.5, 58}
	if v, why, _ := Decide(good, bimodal, []float64{17.6, 17.55, 17.65, 17.6}, 25); v != Inconclusive {
		t.Errorf("against a bimodal bad end: %s (%s), want inconclusive", v, why)
	}
}

func TestReport(t *testing.T) {
	f, specs := planted(6, 3)
	r, err := Run(context.Background(), f, Options{Specs: specs, Metric: "Delete/", ThresholdPct: 25})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := r.WriteReport(&b, "dummy-serial", []string{"devbulk vm --kernel k2 -- bench"}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"%stddev  %change", "+2", "Delete/kind=dummy/strategy=serial/n=100", "steps:", "  devbulk vm --kernel k2 -- bench"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
}

// Progress names the phase, the step of about how many, and the time left.
func TestProgress(t *testing.T) {
	f, specs := planted(8, 5)
	var said []string
	if _, err := Run(context.Background(), f, Options{Specs: specs, Metric: "Delete/", ThresholdPct: 25, Progress: func(s string) { said = append(said, s) }}); err != nil {
		t.Fatal(err)
	}
	if len(said) != len(f.boots) || said[0] != "bisect: ends, boot 1 (k0)" || !strings.HasPrefix(said[4], "bisect: step 1 of about 3, boot 5 (k3, about ") || !strings.Contains(said[len(said)-1], "confirm, boot") {
		t.Errorf("progress: %q", said)
	}
}

func TestKTAP(t *testing.T) {
	f, specs := planted(8, 5)
	f.dead["k3"] = true
	r, err := Run(context.Background(), f, Options{Specs: specs, Metric: "Delete/", ThresholdPct: 25})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := r.WriteKTAP(&b, "s"); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"KTAP version 1\n1..5\n# devbulk found a", "ok 1 ends # k7 against k0: +", "ok 2 step_3 # SKIP k3: kernel did not run the scenario", "ok 3 step_4 # k4: good", "ok 5 confirmation # +"} {
		if !strings.Contains(out, want) {
			t.Errorf("KTAP lacks %q:\n%s", want, out)
		}
	}
}

// A host error (not the kernel's) is not logged: a rerun boots again. A
// dead boot does not raise the next boot's timeout.
func TestHostErrorsAreNotLogged(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.json")
	f, specs := planted(4, 2)
	l, _ := OpenLog(path, "k")
	if _, err := Run(context.Background(), hostError{f}, Options{Specs: specs, Metric: "Delete/", ThresholdPct: 25, Log: l}); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("a host error: %v", err)
	}
	if again, _ := OpenLog(path, "k"); again.Resumed() != 0 {
		t.Errorf("the host error was logged: %d boots", again.Resumed())
	}
	f.dead["k1"] = true
	b := &bisection{m: f, o: Options{Specs: specs, Log: &Log{}}, r: &Result{}}
	for range 3 {
		b.boot(context.Background(), "step", 1, map[int]map[string][]float64{})
	}
	if b.timeout() != 3*time.Minute {
		t.Errorf("after three dead boots the timeout is %v", b.timeout())
	}
}

type hostError struct{ *fake }

func (hostError) Measure(context.Context, string, time.Duration) (map[string][]float64, error) {
	return nil, fmt.Errorf("no space left: disk full")
}

// A list of commits: the bad end with the first bad one reverted is
// measured beside the last good kernel and the bad end, alternating; a
// revert that brings the good figures back restores, one that does not
// (the culprit was elsewhere) says so.
func TestRevertConfirmsTheCulprit(t *testing.T) {
	for _, restores := range []bool{true, false} {
		f, specs := planted(6, 3)
		f.ms["k5+revert:k3"] = 17
		if !restores {
			f.ms["k5+revert:k3"] = 57
		}
		o := Options{Specs: specs, Metric: "Delete/", ThresholdPct: 25, Revert: func(bad string) string { return "k5+revert:" + bad }}
		r, err := Run(context.Background(), f, o)
		if err != nil || r.Revert == nil || r.Revert.Restores != restores || r.Revert.Spec != "k5+revert:k3" {
			t.Fatalf("restores %v: %+v, %v", restores, r.Revert, err)
		}
		if n := strings.Count(strings.Join(f.boots, " "), "k5+revert:k3"); n != 2 {
			t.Errorf("the revert booted %d times, want 2 (alternating with both ends)", n)
		}
		want := "the bad end with it reverted restores the good figures"
		if !restores {
			want = "the bad end with it reverted does NOT restore the good figures"
		}
		if !strings.Contains(r.Words("dummy-serial"), want) {
			t.Errorf("restores %v: words %q", restores, r.Words("dummy-serial"))
		}
	}
}

// A revert that cannot be measured (it does not apply on the bad end, or
// does not boot) leaves the answer standing and says why.
func TestRevertThatDoesNotRunKeepsTheAnswer(t *testing.T) {
	f, specs := planted(6, 3)
	f.dead["k5+revert:k3"] = true
	r, err := Run(context.Background(), f, Options{Specs: specs, Metric: "Delete/", ThresholdPct: 25, Revert: func(bad string) string { return "k5+revert:" + bad }})
	if err != nil || !r.Found || !r.Confirmed || r.Revert == nil || r.Revert.Err == "" || r.Revert.Restores {
		t.Fatalf("%+v, %v", r.Revert, err)
	}
	if !strings.Contains(r.Words("x"), "its revert could not be measured (k5+revert:k3: ") {
		t.Errorf("words: %s", r.Words("x"))
	}
}
