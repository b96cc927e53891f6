// Package ratio compares two samples of times taken side by side: the
// ratio of their medians, a distribution-free 95% confidence interval for
// it, and the Mann-Whitney U test's two-sided p-value (the test benchstat
// and devbulk check use).
//
// The interval is the Hodges-Lehmann interval on log times: of the n1*n2
// pairwise log-ratios, sorted, it runs from the k-th smallest to the k-th
// largest, with k the number of U values the test rejects at α/2 in each
// tail. It is the interval that inverts the U test, so it excludes 1
// exactly when the test rejects "no shift" at 5% (ties aside). Too few
// samples give none: with four a side the interval is the whole range of
// ratios; with three or fewer there is none.
package ratio

import (
	"math"
	"slices"

	"golang.org/x/perf/benchmath"

	"github.com/aclements/go-moremath/stats"
)

// Confidence is the level of the interval.
const Confidence = 0.95

// Alpha is the significance level of every comparison devbulk makes
// (benchstat's).
const Alpha = 1 - Confidence

// Result compares b with a.
type Result struct {
	// MedianA and MedianB are the samples' medians; Ratio is MedianB/MedianA.
	MedianA, MedianB float64
	Ratio            float64
	// CI is [lo, hi], bounding the ratio with Confidence; nil when the
	// samples are too small for an interval.
	CI []float64
	// P is the two-sided Mann-Whitney U test's p-value (benchstat's test,
	// computed once: benchmath's); 1 where the test cannot tell, with a
	// warning.
	P float64
	// Warnings are benchmath's: too few samples to see a difference at
	// Alpha, or the test's own failure.
	Warnings []string
}

// Changed is the one rule by which devbulk calls a change real, in check's
// verdicts and in a bisection's steps: the U test rejects "no shift" at
// Alpha, the interval (where there is one) excludes 1, and the medians
// differ by more than thresholdPct.
func (r Result) Changed(thresholdPct float64) bool {
	excludesOne := r.CI == nil || r.CI[0] > 1 || r.CI[1] < 1
	return r.P < Alpha && excludesOne && math.Abs(r.Ratio-1)*100 > thresholdPct
}

// Compare compares sample b with sample a (both positive times), leaving
// them as they are.
func Compare(a, b []float64) (Result, error) {
	var r Result
	if len(a) == 0 || len(b) == 0 {
		return r, stats.ErrSampleSize
	}
	r.MedianA, r.MedianB = Median(a), Median(b)
	r.Ratio = r.MedianB / r.MedianA
	thr := &benchmath.DefaultThresholds
	u := benchmath.AssumeNothing.Compare(benchmath.NewSample(slices.Clone(a), thr), benchmath.NewSample(slices.Clone(b), thr))
	r.P = u.P
	for _, w := range u.Warnings {
		r.Warnings = append(r.Warnings, w.Error())
	}
	k := tail(len(a), len(b), (1-Confidence)/2)
	if k == 0 {
		return r, nil
	}
	logs := make([]float64, 0, len(a)*len(b))
	for _, x := range a {
		for _, y := range b {
			logs = append(logs, math.Log(y/x))
		}
	}
	slices.Sort(logs)
	r.CI = []float64{math.Exp(logs[k-1]), math.Exp(logs[len(logs)-k])}
	return r, nil
}

// tail is the largest k with P(U <= k-1) <= alpha under no shift (no
// ties), 0 when even U = 0 is likelier than alpha.
func tail(n1, n2 int, alpha float64) int {
	d := stats.UDist{N1: n1, N2: n2}
	k := 0
	for k < n1*n2 && d.CDF(float64(k)) <= alpha {
		k++
	}
	return k
}

// Median is the median of xs (which it leaves as they are); NaN for none.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// MedianCI is the median of a sample and its distribution-free confidence
// interval (benchmath's, as benchstat reports it); the interval is nil where
// the sample is too small to give one (fewer than 6 values at 95%).
func MedianCI(s *benchmath.Sample) (float64, []float64) {
	sum := benchmath.AssumeNothing.Summary(s, Confidence)
	if math.IsInf(sum.Lo, 0) || math.IsInf(sum.Hi, 0) {
		return sum.Center, nil
	}
	return sum.Center, []float64{sum.Lo, sum.Hi}
}
