package bisect

import (
	"fmt"
	"math"

	"github.com/devbulk/devbulk/internal/ratio"
)

// Verdict is what a step decided of a kernel.
type Verdict string

// The verdicts of a step.
const (
	Good Verdict = "good"
	Bad  Verdict = "bad"
	// Inconclusive: the figures are like neither end, or like both; more
	// boots may tell.
	Inconclusive Verdict = "inconclusive"
	// Skip: the kernel did not boot, hung, or stayed inconclusive after
	// the most boots allowed; the search goes on around it.
	Skip Verdict = "skip"
)

// Alpha is the significance level of every comparison (benchstat's).
const Alpha = 0.05

// Change is how the bad end differs from the good one in the metric.
type Change struct {
	ratio.Result
	// Significant: p < Alpha, the 95% interval of the ratio excludes 1,
	// and the median moved by more than the threshold.
	Significant bool
}

// Pct is the change of the median in percent (+227: 3.27 times slower).
func (c Change) Pct() float64 { return (c.Ratio - 1) * 100 }

// String is the change as a report says it: "+227% (95% CI +190%..+260%,
// p=0.002)".
func (c Change) String() string {
	s := fmt.Sprintf("%+.0f%%", c.Pct())
	if c.CI != nil {
		s += fmt.Sprintf(" (95%% CI %+.0f%%..%+.0f%%, p=%.3f)", (c.CI[0]-1)*100, (c.CI[1]-1)*100, c.P)
	} else {
		s += fmt.Sprintf(" (p=%.3f; too few samples for an interval)", c.P)
	}
	return s
}

// Compare says how sample b differs from sample a, and whether that is a
// significant change larger than thresholdPct.
func Compare(a, b []float64, thresholdPct float64) (Change, error) {
	r, err := ratio.Compare(a, b)
	if err != nil {
		return Change{}, err
	}
	moved := math.Abs(r.Ratio-1)*100 > thresholdPct
	excludesOne := r.CI == nil || r.CI[0] > 1 || r.CI[1] < 1
	return Change{Result: r, Significant: r.P < Alpha && excludesOne && moved}, nil
}

// Decide says whether a candidate's samples are like the good end's or the
// bad end's. Good when they differ significantly from the bad end and not
// from the good one; bad the other way round. Like both or neither:
// inconclusive; a candidate significantly apart from both (a change in two
// steps) goes with the end its median is nearer to, on a log scale, and
// the reason says so.
func Decide(good, bad, cand []float64) (Verdict, string, error) {
	g, err := ratio.Compare(good, cand)
	if err != nil {
		return Inconclusive, "", err
	}
	b, err := ratio.Compare(bad, cand)
	if err != nil {
		return Inconclusive, "", err
	}
	fromGood, fromBad := g.P < Alpha, b.P < Alpha
	why := fmt.Sprintf("against good ×%.2f p=%.3f, against bad ×%.2f p=%.3f", g.Ratio, g.P, b.Ratio, b.P)
	switch {
	case fromBad && !fromGood:
		return Good, why, nil
	case fromGood && !fromBad:
		return Bad, why, nil
	case fromGood && fromBad:
		// Where between the ends the candidate's median lies: 0 at the
		// good end's, 1 at the bad end's.
		at := math.Log(g.Ratio) / (math.Log(g.Ratio) - math.Log(b.Ratio))
		if at >= 0.5 {
			return Bad, why + fmt.Sprintf("; apart from both, %.0f%% of the way to bad", at*100), nil
		}
		return Good, why + fmt.Sprintf("; apart from both, %.0f%% of the way to bad", at*100), nil
	}
	return Inconclusive, why, nil
}
