package charts

import (
	"errors"
	"fmt"
	"image/color"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg/draw"

	"github.com/devbulk/devbulk/bisect"
	"github.com/devbulk/devbulk/internal/ratio"
)

// Bisect plots a bisection: the metric's median on each kernel it measured,
// in list order, coloured by what was decided of it (the ends, good, bad,
// skipped), with the kernels named by what sets them apart.
func Bisect(r *bisect.Result) (*plot.Plot, error) {
	verdict := map[int]string{0: "good end", len(r.Specs) - 1: "bad end"}
	for _, st := range r.Steps {
		verdict[st.Index] = string(st.Verdict)
	}
	groups := map[string]plotter.XYs{}
	for k, samples := range r.Samples {
		if v := samples[r.Metric]; len(v) > 0 && verdict[k] != "" {
			groups[verdict[k]] = append(groups[verdict[k]], plotter.XY{X: float64(k), Y: ratio.Median(v) / 1e6})
		}
	}
	if len(groups) == 0 {
		return nil, errors.New("the bisection measured nothing to draw")
	}
	p := plot.New()
	p.Title.Text = "devbulk bisect: " + r.Metric
	p.X.Label.Text = "kernel configuration, in list order"
	p.Y.Label.Text = "ms (median of a kernel's samples)"
	p.NominalX(distinct(r.Specs)...)
	p.Y.Tick.Marker = plainTicks{}
	colours := map[string]color.Color{"good end": color.RGBA{0, 120, 0, 255}, "good": color.RGBA{90, 190, 90, 255},
		"bad end": color.RGBA{180, 0, 0, 255}, "bad": color.RGBA{230, 110, 90, 255}, string(bisect.Skip): color.Gray{150}}
	for _, name := range []string{"good end", "good", "bad", "bad end", string(bisect.Skip)} {
		xy := groups[name]
		if len(xy) == 0 {
			continue
		}
		s, err := plotter.NewScatter(xy)
		if err != nil {
			return nil, err
		}
		s.GlyphStyle.Color, s.GlyphStyle.Radius, s.GlyphStyle.Shape = colours[name], 4, draw.CircleGlyph{}
		p.Add(s)
		p.Legend.Add(name, s)
	}
	p.Y.Min = 0
	return p, nil
}

// distinct names each spec by what sets it apart from the others: their
// common beginning and end left out ("47" for linux-image-6.1.0-47-cloud-amd64).
func distinct(specs []string) []string {
	if len(specs) < 2 {
		return specs
	}
	pre, suf := specs[0], specs[0]
	for _, s := range specs[1:] {
		for !strings.HasPrefix(s, pre) {
			pre = pre[:len(pre)-1]
		}
		for !strings.HasSuffix(s, suf) {
			suf = suf[1:]
		}
	}
	// Whole numbers: 47 and 57 share their 7, which is theirs.
	for pre != "" && isDigit(pre[len(pre)-1]) {
		pre = pre[:len(pre)-1]
	}
	for suf != "" && isDigit(suf[0]) {
		suf = suf[1:]
	}
	out := make([]string, len(specs))
	for i, s := range specs {
		rest := strings.TrimSuffix(strings.TrimPrefix(s, pre), suf)
		if rest == "" {
			rest = fmt.Sprint(i)
		}
		out[i] = rest
	}
	return out
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
