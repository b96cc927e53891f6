package check

import (
	"github.com/devbulk/devbulk/kernlog"

	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/perf/benchmath"

	"github.com/devbulk/devbulk/internal/ratio"
)

// Verdicts of one benchmark's comparison.
const (
	Same        = "same"        // no significant difference, or one within the threshold
	Regression  = "regression"  // significantly slower, beyond the threshold
	Improvement = "improvement" // significantly faster, beyond the threshold
	Missing     = "missing"     // in the baseline, not measured now
	New         = "new"         // measured now, not in the baseline
)

// Confidence is the confidence level of the intervals reported.
const Confidence = ratio.Confidence

// Comparison is one benchmark (ns/op: per device or per namespace) in the
// baseline and now.
type Comparison struct {
	Benchmark string   `json:"benchmark"`
	Unit      string   `json:"unit"`
	Base      *Summary `json:"baseline,omitempty"`
	Cur       *Summary `json:"current,omitempty"`
	// DeltaPct is the change of the median, in percent of the baseline's;
	// DeltaCI95 bounds it with 95% confidence (the interval of the ratio of
	// the medians, internal/ratio), absent with too few values.
	DeltaPct  float64   `json:"delta_pct"`
	DeltaCI95 []float64 `json:"delta_ci95_pct,omitempty"`
	// P is the p-value of the Mann-Whitney U test (the samples come from
	// one distribution); Alpha the level under which that is rejected.
	P        float64  `json:"p"`
	Alpha    float64  `json:"alpha"`
	Verdict  string   `json:"verdict"`
	Warnings []string `json:"warnings,omitempty"`
}

// Summary is a sample's median with its confidence interval at
// Confidence; Lo and Hi are absent when the sample is too small to give
// one (fewer than 6 values for 95%).
type Summary struct {
	Median float64   `json:"median"`
	Lo     *float64  `json:"lo,omitempty"`
	Hi     *float64  `json:"hi,omitempty"`
	N      int       `json:"n"`
	Values []float64 `json:"values"` // sorted
}

// Range is the interval's half-width in percent of the median, as
// benchstat's "± x%"; ok is false without an interval.
func (s *Summary) Range() (pct float64, ok bool) {
	if s.Lo == nil || s.Hi == nil || s.Median == 0 {
		return 0, false
	}
	return 100 * math.Max(*s.Hi/s.Median-1, 1-*s.Lo/s.Median), true
}

// ScenarioComparison is one scenario's outcome against the baseline.
type ScenarioComparison struct {
	Name        string            `json:"name"`
	Skip        string            `json:"skip,omitempty"`
	Error       string            `json:"error,omitempty"`
	Findings    []kernlog.Finding `json:"findings,omitempty"`
	Comparisons []Comparison      `json:"comparisons,omitempty"`
}

// Failed reports whether the scenario fails the check: it errored, the
// kernel complained while it ran, or a benchmark regressed or went missing.
func (s *ScenarioComparison) Failed() bool {
	if s.Error != "" || len(s.Findings) > 0 {
		return true
	}
	for _, c := range s.Comparisons {
		if c.Verdict == Regression || c.Verdict == Missing {
			return true
		}
	}
	return false
}

// Report is a check's outcome: the current results, compared with the
// baseline when there is one.
type Report struct {
	Current   *Results             `json:"current"`
	Baseline  *Meta                `json:"baseline,omitempty"`
	Threshold float64              `json:"threshold_pct"`
	Scenarios []ScenarioComparison `json:"scenarios"`
}

// Failed reports whether any scenario failed.
func (c *Report) Failed() bool {
	for i := range c.Scenarios {
		if c.Scenarios[i].Failed() {
			return true
		}
	}
	return false
}

// AllSkipped reports whether no scenario could run.
func (c *Report) AllSkipped() bool {
	for _, s := range c.Scenarios {
		if s.Skip == "" {
			return false
		}
	}
	return true
}

// Compare compares the current results with a baseline (nil: no
// comparison, only the current summaries) scenario by scenario. A
// benchmark regresses when it is slower with p < α (benchstat's
// Mann-Whitney U test, α = 0.05) and its median by more than thresholdPct
// percent; both conditions, so that neither noise nor a tiny but
// significant drift fails a check. A baseline scenario the current run
// lacks is compared too: its benchmarks are missing.
func Compare(base, cur *Results, thresholdPct float64) *Report {
	c := &Report{Current: cur, Threshold: thresholdPct}
	if base != nil {
		c.Baseline = &base.Meta
	}
	for _, sc := range cur.Scenarios {
		out := ScenarioComparison{Name: sc.Name, Skip: sc.Skip, Error: sc.Error, Findings: sc.Findings}
		if sc.Skip == "" {
			var bl []Line
			if base != nil {
				if b := base.scenario(sc.Name); b != nil {
					bl = b.Lines
				}
			}
			out.Comparisons = compareLines(bl, sc.Lines, base != nil, thresholdPct)
		}
		c.Scenarios = append(c.Scenarios, out)
	}
	// A scenario the baseline has and this run lacks (another suite, a
	// renamed scenario) fails as its benchmarks do, never silently.
	if base != nil {
		for _, b := range base.Scenarios {
			if cur.scenario(b.Name) == nil && len(b.Lines) > 0 {
				c.Scenarios = append(c.Scenarios, ScenarioComparison{Name: b.Name, Comparisons: compareLines(b.Lines, nil, true, thresholdPct)})
			}
		}
	}
	return c
}

func (r *Results) scenario(name string) *Scenario {
	for i := range r.Scenarios {
		if r.Scenarios[i].Name == name {
			return &r.Scenarios[i]
		}
	}
	return nil
}

// samples groups the ns/op values of lines by benchmark, in first-seen order.
func samples(lines []Line) (names []string, vals map[string][]float64) {
	vals = map[string][]float64{}
	for _, l := range lines {
		for _, v := range l.Values {
			if v.Unit != UnitNsPerOp {
				continue
			}
			if _, ok := vals[l.Name]; !ok {
				names = append(names, l.Name)
			}
			vals[l.Name] = append(vals[l.Name], v.Value) // a copy: the lines keep their run order
		}
	}
	return names, vals
}

func compareLines(base, cur []Line, haveBase bool, thresholdPct float64) []Comparison {
	thr := &benchmath.DefaultThresholds
	bn, bv := samples(base)
	cn, cv := samples(cur) // NewSample sorts these in place: they are samples' own copies
	var out []Comparison
	for _, name := range cn {
		cs := benchmath.NewSample(cv[name], thr)
		c := Comparison{Benchmark: name, Unit: UnitNsPerOp, Cur: summarize(cs), Alpha: ratio.Alpha, Verdict: New}
		c.Warnings = warnings(cs.Warnings)
		if bvals, ok := bv[name]; ok {
			bs := benchmath.NewSample(bvals, thr)
			c.Base = summarize(bs)
			r, _ := ratio.Compare(bvals, cv[name]) // fails only on an empty sample: samples keeps none
			c.P = r.P
			c.Warnings = append(c.Warnings, r.Warnings...)
			if c.Base.Median > 0 {
				c.DeltaPct = (c.Cur.Median/c.Base.Median - 1) * 100
			}
			if r.CI != nil {
				c.DeltaCI95 = []float64{(r.CI[0] - 1) * 100, (r.CI[1] - 1) * 100}
			}
			switch {
			case !r.Changed(thresholdPct):
				c.Verdict = Same
			case r.Ratio > 1:
				c.Verdict = Regression
			default:
				c.Verdict = Improvement
			}
		} else if !haveBase {
			c.Verdict = ""
		}
		out = append(out, c)
	}
	var missing []string
	for _, name := range bn {
		if _, ok := cv[name]; !ok {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	for _, name := range missing {
		bs := benchmath.NewSample(bv[name], thr)
		out = append(out, Comparison{Benchmark: name, Unit: UnitNsPerOp, Base: summarize(bs), Alpha: ratio.Alpha, Verdict: Missing})
	}
	return out
}

func summarize(s *benchmath.Sample) *Summary { // s's values are sorted
	median, ci := ratio.MedianCI(s)
	out := &Summary{Median: median, N: len(s.Values), Values: s.Values}
	if ci != nil {
		out.Lo, out.Hi = &ci[0], &ci[1]
	}
	return out
}

func warnings(errs []error) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

// ParseThreshold reads a threshold such as "10%" or "10".
func ParseThreshold(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(s), "%"), 64)
	switch {
	case err != nil || v != v: // NaN
		return 0, fmt.Errorf("--threshold %q is not a percentage: give one such as 25%% (0%%..1000%%)", s)
	case v < 0 || v > 1000:
		return 0, fmt.Errorf("--threshold %q out of range: 0%%..1000%%", s)
	}
	return v, nil
}

// Headline is the benchmark that stands for the scenario where one figure
// must (a fleet's test case): its first teardown (Delete/...), else its
// first benchmark; nil when it measured nothing.
func (s *ScenarioComparison) Headline() *Comparison {
	for i := range s.Comparisons {
		if c := &s.Comparisons[i]; c.Cur != nil && strings.HasPrefix(c.Benchmark, "Delete/") {
			return c
		}
	}
	for i := range s.Comparisons {
		if c := &s.Comparisons[i]; c.Cur != nil {
			return c
		}
	}
	return nil
}
