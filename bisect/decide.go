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

// Change is how the bad end differs from the good one in the metric.
type Change struct {
	ratio.Result
	// Significant: the change is real by devbulk's one rule
	// (ratio.Result.Changed: p < 0.05, the 95% interval of the ratio
	// excludes 1, the median moved by more than the threshold).
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
	return Change{Result: r, Significant: r.Changed(thresholdPct)}, nil
}

// Decide says whether a candidate's samples are like the good end's or the
// bad end's. A candidate is apart from an end when it differs from it
// significantly (p < Alpha) and by more than thresholdPct; where it lies
// between the ends is its median's place on a log scale (0 at the good
// end's, 1 at the bad end's). Bad: apart from the good end, not from the
// bad, and at least half way; good: the mirror image. Apart from both (a
// change in two steps): the end it is nearer to, and the reason says so.
// Anything else is inconclusive: more boots may tell.
func Decide(good, bad, cand []float64, thresholdPct float64) (Verdict, string, error) {
	g, err := Compare(good, cand, thresholdPct)
	if err != nil {
		return Inconclusive, "", err
	}
	b, err := Compare(bad, cand, thresholdPct)
	if err != nil {
		return Inconclusive, "", err
	}
	at := 0.5 // the ends' medians equal: nowhere in particular
	if span := math.Log(g.Ratio) - math.Log(b.Ratio); span != 0 {
		at = math.Log(g.Ratio) / span
	}
	why := fmt.Sprintf("against good ×%.2f p=%.3f, against bad ×%.2f p=%.3f, %.0f%% of the way to bad", g.Ratio, g.P, b.Ratio, b.P, at*100)
	switch {
	case g.Significant && b.Significant:
		if at >= 0.5 {
			return Bad, why + "; apart from both", nil
		}
		return Good, why + "; apart from both", nil
	case g.Significant && at >= 0.5:
		return Bad, why, nil
	case b.Significant && at < 0.5:
		return Good, why, nil
	}
	return Inconclusive, why, nil
}
