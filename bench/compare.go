package bench

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"golang.org/x/perf/benchmath"

	"github.com/devbulk/devbulk/batch"
	"github.com/devbulk/devbulk/internal/ratio"
	"github.com/devbulk/devbulk/internal/result"
)

// Comparison is B's wall time against A's in one phase, over the cycles of
// one count: Ratio = median(B)/median(A), so above 1 means A is faster.
type Comparison struct {
	Count    int    `json:"count"`
	Phase    string `json:"phase"`
	Strategy string `json:"strategy"`
	A        string `json:"a"`
	B        string `json:"b"`
	// MedianA and MedianB are the wall times' medians, in nanoseconds.
	MedianA int64   `json:"median_a_ns"`
	MedianB int64   `json:"median_b_ns"`
	Ratio   float64 `json:"ratio"`
	// CI95 bounds Ratio (see internal/ratio); absent with too few cycles.
	CI95    []float64 `json:"ci95,omitempty"`
	P       float64   `json:"p"`
	N       int       `json:"n"` // cycles a side
	Verdict string    `json:"verdict"`
}

// Cost is the creation cost per device at one count: the median of the
// cycles' ms/device, with its 95% confidence interval when there are
// enough cycles.
type Cost struct {
	Count       int       `json:"count"`
	MsPerDevice float64   `json:"ms_per_device"`
	CI95        []float64 `json:"ci95,omitempty"`
	N           int       `json:"n"`
}

// TooFew is the verdict when there are too few cycles for a conclusion.
const TooFew = "no conclusion: too few repeats for a confidence interval (use --repeat 5 or more)"

// NoDifference is the verdict when the interval holds 1.
const NoDifference = "no significant difference"

// compare fills the comparisons and the headline's figures from the runs.
func (r *Report) compare() {
	for _, n := range counts(r.Runs) {
		cycles := slices.DeleteFunc(slices.Clone(r.Runs), func(c Cycle) bool { return c.Count != n })
		// devbulk against iproute2: creation, then each delete strategy
		// iproute2 has an equivalent for.
		r.Comparisons = appendIf(r.Comparisons, vs(n, "create", string(cycles[0].Create.Strategy), "devbulk", "iproute2",
			walls(cycles, func(c Cycle) *batch.Phase { return &c.Create }),
			walls(cycles, func(c Cycle) *batch.Phase { return c.IPCreate })))
		for _, d := range strategies(cycles) {
			of := byStrategy(cycles, d)
			r.Comparisons = appendIf(r.Comparisons, vs(n, "delete", d, "devbulk", "iproute2",
				walls(of, func(c Cycle) *batch.Phase { return &c.Delete }),
				walls(of, func(c Cycle) *batch.Phase { return c.IPDelete })))
		}
		// Every strategy against the fastest batch path.
		if best := fastestBatch(cycles); best != "" {
			bw := walls(byStrategy(cycles, best), func(c Cycle) *batch.Phase { return &c.Delete })
			for _, d := range strategies(cycles) {
				if d != best {
					r.Against = appendIf(r.Against, vs(n, "delete", d, best, d, bw,
						walls(byStrategy(cycles, d), func(c Cycle) *batch.Phase { return &c.Delete })))
				}
			}
		}
		var ms []float64
		for _, c := range cycles {
			if c.Create.MsPerDevice > 0 {
				ms = append(ms, c.Create.MsPerDevice)
			}
		}
		if len(ms) > 0 {
			cost := Cost{Count: n, N: len(ms)}
			cost.MsPerDevice, cost.CI95 = ratio.MedianCI(benchmath.NewSample(ms, &benchmath.DefaultThresholds))
			r.Creation = append(r.Creation, cost)
		}
	}
}

func appendIf(cs []Comparison, c *Comparison) []Comparison {
	if c == nil {
		return cs
	}
	return append(cs, *c)
}

// vs compares b's walls with a's; nil when either side has none.
func vs(n int, phase, strategy, a, b string, aw, bw []float64) *Comparison {
	res, err := ratio.Compare(aw, bw)
	if err != nil {
		return nil
	}
	c := &Comparison{Count: n, Phase: phase, Strategy: strategy, A: a, B: b, Ratio: res.Ratio, P: res.P,
		N: min(len(aw), len(bw)), MedianA: int64(res.MedianA), MedianB: int64(res.MedianB), CI95: res.CI}
	switch {
	case res.CI == nil:
		c.Verdict = TooFew
	case res.CI[0] > 1:
		c.Verdict = a + " faster"
	case res.CI[1] < 1:
		c.Verdict = b + " faster"
	default:
		c.Verdict = NoDifference
	}
	return c
}

func walls(cs []Cycle, phase func(Cycle) *batch.Phase) []float64 {
	var out []float64
	for _, c := range cs {
		if p := phase(c); p != nil && p.WallNS > 0 {
			out = append(out, float64(p.WallNS))
		}
	}
	return out
}

func counts(cs []Cycle) []int {
	var out []int
	for _, c := range cs {
		if !slices.Contains(out, c.Count) {
			out = append(out, c.Count)
		}
	}
	return out
}

func strategies(cs []Cycle) []string {
	var out []string
	for _, c := range cs {
		if !slices.Contains(out, c.Delete.Strategy) {
			out = append(out, c.Delete.Strategy)
		}
	}
	return out
}

func byStrategy(cs []Cycle, d string) []Cycle {
	return slices.DeleteFunc(slices.Clone(cs), func(c Cycle) bool { return c.Delete.Strategy != d })
}

// fastestBatch is the batch path (one unregister batch for all) with the
// lowest median delete time, "" when the bench ran none.
func fastestBatch(cs []Cycle) string {
	best, bestWall := "", 0.0
	for _, d := range strategies(cs) {
		if !batch.DeleteStrategy(d).OneBatch() {
			continue
		}
		if w := walls(byStrategy(cs, d), func(c Cycle) *batch.Phase { return &c.Delete }); len(w) > 0 {
			if m := ratio.Median(w); best == "" || m < bestWall {
				best, bestWall = d, m
			}
		}
	}
	return best
}

// writeComparisons prints devbulk against iproute2, phase by phase.
func (r *Report) writeComparisons(w io.Writer) error {
	if len(r.Comparisons) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\ndevbulk against iproute2, side by side (ratio = iproute2/devbulk: above 1, devbulk is faster)")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "N\tphase\tstrategy\tcycles\tdevbulk\tiproute2\tratio\t95% CI\tp\tverdict\t")
	for _, c := range r.Comparisons {
		p := fmt.Sprintf("%.3f", c.P)
		if c.P < 0.001 {
			p = "<0.001"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%s\t%s\t%.2f\t%s\t%s\t%s\t\n", c.Count, c.Phase, c.Strategy, c.N,
			result.FormatNS(c.MedianA), result.FormatNS(c.MedianB), c.Ratio, ci(c.CI95, "%.2f", ""), p, c.Verdict)
	}
	return tw.Flush()
}

// writeHeadline states the result in words: each delete strategy against
// the fastest batch path, and the cost of creating one device.
func (r *Report) writeHeadline(w io.Writer) {
	var lines []string
	for _, c := range r.Against {
		times := fmt.Sprintf("%.3g×", c.Ratio)
		how := "slower than"
		if c.Ratio < 1 {
			times, how = fmt.Sprintf("%.3g×", 1/c.Ratio), "faster than"
		}
		line := fmt.Sprintf("N=%d %s: %s %s %s", c.Count, c.B, times, how, c.A)
		switch {
		case c.Verdict == TooFew:
			line += fmt.Sprintf(" in the median of %s; too few for a confidence interval (use --repeat 5 or more)", plural(c.N, "cycle"))
		case c.Verdict == NoDifference:
			line = fmt.Sprintf("N=%d %s: no significant difference from %s (%.3g×, 95%% CI %s)", c.Count, c.B, c.A, c.Ratio, ci(c.CI95, "%.3g", "×"))
		case c.Ratio >= 1:
			line += fmt.Sprintf(" (95%% CI %s)", ci(c.CI95, "%.3g", "×"))
		default:
			line += fmt.Sprintf(" (95%% CI %s)", ci([]float64{1 / c.CI95[1], 1 / c.CI95[0]}, "%.3g", "×"))
		}
		lines = append(lines, line)
	}
	for _, c := range r.Creation {
		line := fmt.Sprintf("N=%d create: %.4g ms per device", c.Count, c.MsPerDevice)
		if c.CI95 != nil {
			line += fmt.Sprintf(" (95%% CI %s ms, %s)", ci(c.CI95, "%.4g", ""), plural(c.N, "cycle"))
		} else {
			line += fmt.Sprintf(" (median of %s)", plural(c.N, "cycle"))
		}
		lines = append(lines, line)
	}
	if len(lines) > 0 {
		fmt.Fprintf(w, "\nIn words:\n  %s\n", strings.Join(lines, "\n  "))
	}
}

func ci(b []float64, format, unit string) string {
	if len(b) != 2 {
		return "-"
	}
	return fmt.Sprintf(format+"–"+format+unit, b[0], b[1])
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
