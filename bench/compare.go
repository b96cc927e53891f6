package bench

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/perf/benchmath"

	"github.com/devbulk/devbulk"
	"github.com/devbulk/devbulk/batch"
	"github.com/devbulk/devbulk/internal/ratio"
)

// Comparison is B's wall time against A's in one phase, over the cycles of
// one count (see devbulk.Comparison: above 1, A is faster).
type Comparison struct {
	Count    int    `json:"count"`
	Phase    string `json:"phase"`
	Strategy string `json:"strategy"`
	devbulk.Comparison
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

// compare fills the comparisons and the headline's figures from the runs.
func (r *Report) compare() {
	for _, n := range counts(r.Runs) {
		cycles := slices.DeleteFunc(slices.Clone(r.Runs), func(c Cycle) bool { return c.Count != n || c.BystanderPaused })
		if len(cycles) > 0 && cycles[0].Namespaces > 0 {
			r.scaling(n, cycles)
			continue
		}
		if paused := slices.DeleteFunc(slices.Clone(r.Runs), func(c Cycle) bool { return c.Count != n || !c.BystanderPaused }); len(paused) > 0 {
			r.influence(n, cycles, paused)
		}
		// devbulk against iproute2: creation, then each delete strategy
		// iproute2 has an equivalent for.
		r.Comparisons = appendIf(r.Comparisons, vs(n, "create", string(cycles[0].Create.Strategy),
			side{"devbulk", walls(cycles, func(c Cycle) *Phase { return &c.Create })},
			side{"iproute2", walls(cycles, func(c Cycle) *Phase { return c.IPCreate })}))
		for _, d := range strategies(cycles, deleteOf) {
			of := byStrategy(cycles, deleteOf, d)
			r.Comparisons = appendIf(r.Comparisons, vs(n, "delete", d,
				side{"devbulk", walls(of, deleteOf)}, side{"iproute2", walls(of, func(c Cycle) *Phase { return c.IPDelete })}))
		}
		// Every delete strategy against the fastest batch path, and every
		// move strategy against the fastest move.
		r.against(n, cycles, "delete", deleteOf, func(d string) bool { return batch.DeleteStrategy(d).OneBatch() })
		r.against(n, cycles, "move", moveOf, func(string) bool { return true })
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

// against compares each strategy of phase with the fastest of those best
// accepts, over the cycles of count n.
func (r *Report) against(n int, cycles []Cycle, name string, phase func(Cycle) *Phase, best func(string) bool) {
	b := fastest(cycles, phase, best)
	if b == "" {
		return
	}
	label := func(s string) string {
		if name == "delete" {
			return s // as the delete strategies have always been named
		}
		return name + " " + s
	}
	bw := side{label(b), walls(byStrategy(cycles, phase, b), phase)}
	for _, s := range strategies(cycles, phase) {
		if s != b {
			r.Against = appendIf(r.Against, vs(n, name, s, bw, side{label(s), walls(byStrategy(cycles, phase, s), phase)}))
		}
	}
}

func appendIf(cs []Comparison, c *Comparison) []Comparison {
	if c == nil {
		return cs
	}
	return append(cs, *c)
}

// side is one side of a comparison: its name and its wall times.
type side struct {
	name  string
	walls []float64
}

// vs compares b's walls with a's; nil when either side has none.
func vs(n int, phase, strategy string, a, b side) *Comparison {
	c := devbulk.Compare(a.name, b.name, a.walls, b.walls)
	if c == nil {
		return nil
	}
	return &Comparison{Count: n, Phase: phase, Strategy: strategy, Comparison: *c}
}

func walls(cs []Cycle, phase func(Cycle) *Phase) []float64 {
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

// strategies are the strategies of phase in the cycles, in order of first
// appearance.
func strategies(cs []Cycle, phase func(Cycle) *Phase) []string {
	var out []string
	for _, c := range cs {
		if p := phase(c); p != nil && !slices.Contains(out, p.Strategy) {
			out = append(out, p.Strategy)
		}
	}
	return out
}

// byStrategy are the cycles whose phase ran strategy s.
func byStrategy(cs []Cycle, phase func(Cycle) *Phase, s string) []Cycle {
	return slices.DeleteFunc(slices.Clone(cs), func(c Cycle) bool { p := phase(c); return p == nil || p.Strategy != s })
}

// deleteOf and moveOf are a cycle's delete and move phases.
func deleteOf(c Cycle) *Phase { return &c.Delete }
func moveOf(c Cycle) *Phase   { return c.Move }

// fastest is the strategy of phase with the lowest median wall time among
// those keep accepts, "" when none ran.
func fastest(cs []Cycle, phase func(Cycle) *Phase, keep func(string) bool) string {
	best, bestWall := "", 0.0
	for _, s := range strategies(cs, phase) {
		if !keep(s) {
			continue
		}
		if w := walls(byStrategy(cs, phase, s), phase); len(w) > 0 {
			if m := ratio.Median(w); best == "" || m < bestWall {
				best, bestWall = s, m
			}
		}
	}
	return best
}

// writeComparisons prints devbulk against iproute2, phase by phase.
func (r *Report) writeComparisons(w io.Writer) error {
	rows := make([]devbulk.ComparisonRow, len(r.Comparisons))
	for i, c := range r.Comparisons {
		rows[i] = devbulk.ComparisonRow{Keys: []string{strconv.Itoa(c.Count), c.Phase, c.Strategy}, Comparison: c.Comparison}
	}
	return devbulk.WriteComparisons(w, "devbulk against iproute2, side by side (ratio = iproute2/devbulk: above 1, devbulk is faster)",
		[]string{"N", "phase", "strategy"}, "cycles", rows)
}

// writeHeadline states the result in words: each delete (and move) strategy against
// the fastest batch path, and the cost of creating one device.
func (r *Report) writeHeadline(w io.Writer) {
	var lines []string
	for _, c := range r.Against {
		lines = append(lines, fmt.Sprintf("N=%d %s: %s", c.Count, c.B, c.Words("cycle")))
	}
	for _, c := range r.Scaling {
		lines = append(lines, fmt.Sprintf("N=%d %s %s: %s", c.Count, c.Phase, c.Strategy, c.Words("cycle")))
	}
	for _, c := range r.Creation {
		line := fmt.Sprintf("N=%d create: %.4g ms per device", c.Count, c.MsPerDevice)
		if c.CI95 != nil {
			line += fmt.Sprintf(" (95%% CI %s ms, %s)", devbulk.Comparison{CI95: c.CI95}.CIText("%.4g", ""), devbulk.Plural(c.N, "cycle"))
		} else {
			line += fmt.Sprintf(" (median of %s)", devbulk.Plural(c.N, "cycle"))
		}
		lines = append(lines, line)
	}
	if len(lines) > 0 {
		fmt.Fprintf(w, "\nIn words:\n  %s\n", strings.Join(lines, "\n  "))
	}
}
