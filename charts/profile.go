package charts

import (
	"errors"
	"fmt"
	"image/color"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/devbulk/devbulk/bench"
	"github.com/devbulk/devbulk/internal/result"
	"github.com/devbulk/devbulk/kprofile"
)

// profileSegments is how many functions get a segment of their own; the
// rest are drawn together as "other traced".
const profileSegments = 7

// Profile draws a profiled bench (--profile) as a stacked bar per phase
// (count, create or delete, and strategy): the share of its wall time each kernel
// function took, the rest traced, and what was not traced.
func Profile(r *bench.Report) (*plot.Plot, error) {
	pps := r.Profiles()
	if len(pps) == 0 {
		return nil, errors.New("the bench report has no profile (bench --profile)")
	}
	// The functions with the most time over all phases get segments.
	total := map[string]int64{}
	var fns []string
	for _, pp := range pps {
		for _, e := range pp.Entries {
			if _, ok := total[e.Function]; !ok {
				fns = append(fns, e.Function)
			}
			total[e.Function] += e.TotalNS
		}
	}
	slices.SortStableFunc(fns, func(a, b string) int { return int(total[b] - total[a]) })
	fns = fns[:min(profileSegments, len(fns))]
	segments := append(slices.Clone(fns), "other traced", "unattributed")
	shares := make([]plotter.Values, len(segments)) // [segment][phase], percent
	var names []string
	// Nominal rows count from the bottom: the first phase goes on top.
	for i := len(pps) - 1; i >= 0; i-- {
		pp := pps[i]
		names = append(names, fmt.Sprintf("N=%d %s %s (%s/device)", pp.Count, pp.Phase, pp.Strategy,
			result.FormatNS(pp.WallNS/int64(max(1, pp.Count*pp.Cycles)))))
		pct := func(ns int64) float64 { return 100 * float64(max(0, ns)) / float64(max(1, pp.WallNS)) }
		other := 0.0
		for _, e := range pp.Entries {
			if !slices.Contains(fns, e.Function) {
				other += pct(e.TotalNS)
			}
		}
		for s, seg := range segments {
			v := 0.0
			switch seg {
			case "other traced":
				v = other
			case "unattributed":
				v = pct(pp.UnattributedNS)
			default:
				if j := slices.IndexFunc(pp.Entries, func(e kprofile.Entry) bool { return e.Function == seg }); j >= 0 {
					v = pct(pp.Entries[j].TotalNS)
				}
			}
			shares[s] = append(shares[s], v)
		}
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("devbulk bench --profile: %s on %s", r.Kind, r.Kernel)
	p.X.Label.Text = "share of the phase's wall time (%)"
	p.Legend.Top = true
	var below *plotter.BarChart
	for s, seg := range segments {
		b, err := plotter.NewBarChart(shares[s], vg.Points(14))
		if err != nil {
			return nil, err
		}
		b.Horizontal, b.LineStyle.Width, b.Color = true, 0, plotutil.Color(s)
		switch seg { // plotutil has 7 colours: the 8th and 9th would repeat the 1st and 2nd
		case "other traced":
			b.Color = color.Gray{0x80}
		case "unattributed":
			b.Color = color.Gray{0xd0}
		}
		if below != nil {
			b.StackOn(below)
		}
		below = b
		p.Add(b)
		p.Legend.Add(seg, b)
	}
	p.X.Min, p.X.Max = 0, 100
	p.NominalY(names...)
	p.Y.Tick.Label.Font.Size = vg.Points(8)
	return p, nil
}
