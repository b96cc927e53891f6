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
)

// Bystander plots a bench's bystander: each operation's latency (from when
// it was due, log scale) over time, with the phases it watched shaded, one
// colour per phase and strategy, and its idle p99 as a line.
func Bystander(r *bench.Report) (*plot.Plot, error) {
	if len(r.BystanderTrace) == 0 || r.BystanderIdle == nil {
		return nil, errors.New("the bench report has no bystander (bench --bystander OP)")
	}
	pts := make(plotter.XYs, 0, len(r.BystanderTrace))
	lo, hi := 1e18, 0.0
	for _, t := range r.BystanderTrace {
		ms := max(float64(t.Latency)/1e6, 1e-3) // a log axis: nothing at zero
		pts = append(pts, plotter.XY{X: float64(t.At) / 1e9, Y: ms})
		lo, hi = min(lo, ms), max(hi, ms)
	}
	p := plot.New()
	idle := r.BystanderIdle
	p.Title.Text = fmt.Sprintf("devbulk bench: a %s bystander at %g/s beside %s on %s", idle.Op, idle.Rate, r.Kind, r.Kernel)
	p.X.Label.Text = "seconds since the bystander's first operation"
	p.Y.Label.Text = "latency from when due (ms, log)"
	p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, logTicks{}
	p.Y.Min, p.Y.Max = lo/2, hi*2
	p.Legend.Top = true
	if err := shadePhases(p, r, p.Y.Min, p.Y.Max); err != nil {
		return nil, err
	}
	s, err := plotter.NewScatter(pts)
	if err != nil {
		return nil, err
	}
	s.GlyphStyle.Radius = vg.Points(1.5)
	p.Add(s)
	p.Legend.Add(fmt.Sprintf("%s operations", idle.Op), s)
	if idle.P99 > 0 {
		line, err := plotter.NewLine(plotter.XYs{{X: 0, Y: float64(idle.P99) / 1e6}, {X: pts[len(pts)-1].X, Y: float64(idle.P99) / 1e6}})
		if err != nil {
			return nil, err
		}
		line.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(line)
		p.Legend.Add("idle p99", line)
	}
	return p, nil
}

// shadePhases draws each phase the bystander watched as a band from its
// start to its end, coloured by phase and strategy (one legend entry each).
func shadePhases(p *plot.Plot, r *bench.Report, lo, hi float64) error {
	var labels []string
	for _, c := range r.Runs {
		for _, ph := range c.Phases() {
			b := ph.Bystander
			if b == nil {
				continue
			}
			label := phaseLabel(ph)
			i := slices.Index(labels, label)
			first := i < 0
			if first {
				labels, i = append(labels, label), len(labels)
			}
			band, err := plotter.NewPolygon(plotter.XYs{{X: float64(b.From) / 1e9, Y: lo}, {X: float64(b.To) / 1e9, Y: lo},
				{X: float64(b.To) / 1e9, Y: hi}, {X: float64(b.From) / 1e9, Y: hi}})
			if err != nil {
				return err
			}
			col := color.NRGBAModel.Convert(plotutil.Color(i)).(color.NRGBA)
			col.A = 0x40
			band.Color, band.LineStyle.Width = col, 0
			p.Add(band)
			if first {
				p.Legend.Add(label, band)
			}
		}
	}
	return nil
}

func phaseLabel(ph *bench.Phase) string { return ph.Name + " " + ph.Strategy }
