// Package charts draws devbulk's result documents as SVG with gonum/plot:
// ms per device against the device count for a bench, the backlog of
// released-but-not-freed namespaces over time for a netns run, and current
// against baseline for a check.
package charts

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/devbulk/devbulk/internal/ratio"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/devbulk/devbulk/bench"
	"github.com/devbulk/devbulk/bisect"
	"github.com/devbulk/devbulk/check"
	"github.com/devbulk/devbulk/netnsbench"
)

// Bench plots ms per device against N on log scales: one line per phase
// and strategy (the median over repeats), iproute2's beside devbulk's.
func Bench(r *bench.Report) (*plot.Plot, error) {
	lines := medianLines(r, func(ph *bench.Phase) (float64, bool) {
		return float64(ph.WallNS) / 1e6 / float64(ph.Devices), ph.WallNS > 0
	})
	if len(lines) == 0 {
		return nil, errors.New("the bench report has no measured phase")
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("devbulk bench: %s on %s (%d CPUs)", r.Kind, r.Kernel, r.CPUs)
	p.X.Label.Text = "devices per cycle (N)"
	p.Y.Label.Text = "ms per device (median of repeats)"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = logTicks{}, logTicks{}
	p.Legend.Top = true
	if err := plotutil.AddLinePoints(p, lines...); err != nil {
		return nil, err
	}
	// One count or one value: a log axis needs a range around it (gonum
	// would widen it by ±1, down to zero or below).
	for _, ax := range []*plot.Axis{&p.X, &p.Y} {
		if ax.Min == ax.Max {
			ax.Min, ax.Max = ax.Min/2, ax.Max*2
		}
	}
	return p, nil
}

// BenchMemory plots the kernel's memory per device against N (log scale):
// what each create phase added to slab, per-CPU and vmalloc memory, and
// what it took from MemAvailable, per device (the medians over repeats).
func BenchMemory(r *bench.Report) (*plot.Plot, error) {
	kernel := medianLines(r, func(ph *bench.Phase) (float64, bool) {
		return kmemOf(ph, func(m *bench.KernelMem) float64 { return m.PerDeviceKiB })
	})
	available := medianLines(r, func(ph *bench.Phase) (float64, bool) {
		return kmemOf(ph, func(m *bench.KernelMem) float64 { return -m.AvailablePerDeviceKiB })
	})
	if len(kernel) == 0 {
		return nil, noMemoryFigures(r)
	}
	for i := 0; i < len(available); i += 2 {
		available[i] = available[i].(string) + ": MemAvailable taken"
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("devbulk bench: %s on %s, the kernel's memory per device", r.Kind, r.Kernel)
	p.X.Label.Text = "devices per cycle (N)"
	p.Y.Label.Text = "KiB per device (median of repeats)"
	p.X.Scale, p.X.Tick.Marker, p.Y.Tick.Marker = plot.LogScale{}, logTicks{}, plainTicks{}
	p.Legend.Top = true
	if err := plotutil.AddLinePoints(p, append(kernel, available...)...); err != nil {
		return nil, err
	}
	if p.X.Min == p.X.Max {
		p.X.Min, p.X.Max = p.X.Min/2, p.X.Max*2
	}
	p.Y.Min = 0
	if p.Y.Max <= p.Y.Min {
		p.Y.Max = 1
	}
	return p, nil
}

// noMemoryFigures says why a bench has no kernel memory figure to draw:
// each create withheld its own (too few devices, or other activity), or
// none was read.
func noMemoryFigures(r *bench.Report) error {
	for _, c := range r.Runs {
		if m := c.Create.KernelMem; m != nil && m.Withheld != "" {
			return fmt.Errorf("the bench report has no kernel memory figure to draw: each was withheld (N=%d: %s)", c.Count, m.Withheld)
		}
	}
	return errors.New("the bench report has no kernel memory figures (a create phase reads them from /proc/meminfo and /proc/slabinfo)")
}

// kmemOf is f of the phase's kernel memory, when it is a create phase that
// has one.
func kmemOf(ph *bench.Phase, f func(*bench.KernelMem) float64) (float64, bool) {
	if ph.KernelMem == nil || ph.KernelMem.Withheld != "" || ph.Name != "create" {
		return 0, false
	}
	return f(ph.KernelMem), true
}

// medianLines is, for every phase and strategy (and tool) of the report
// that value gives a figure for, its label and its points: the median
// figure at each N, in order of N; as plotutil.AddLinePoints takes them.
func medianLines(r *bench.Report, value func(*bench.Phase) (float64, bool)) []any {
	perN := map[string]map[int][]float64{}
	var labels []string
	for _, c := range r.Runs {
		for _, ph := range c.Phases() {
			if ph.Devices == 0 {
				continue
			}
			v, ok := value(ph)
			if !ok {
				continue
			}
			label := ph.Name + " " + ph.Strategy
			if ph.Tool == "iproute2" {
				label = "iproute2 " + label
			}
			if perN[label] == nil {
				perN[label] = map[int][]float64{}
				labels = append(labels, label)
			}
			perN[label][c.Count] = append(perN[label][c.Count], v)
		}
	}
	var lines []any
	for _, label := range labels {
		ns := slices.Sorted(maps.Keys(perN[label]))
		xy := make(plotter.XYs, len(ns))
		for i, n := range ns {
			xy[i].X, xy[i].Y = float64(n), ratio.Median(perN[label][n])
		}
		lines = append(lines, label, xy)
	}
	return lines
}

// Netns plots each run's backlog (namespaces released, not yet freed)
// against time since the run's start.
func Netns(r *netnsbench.Report) (*plot.Plot, error) {
	if r.Scenario == "create" {
		return createRate(r)
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("devbulk netns %s on %s (%d CPUs)", r.Scenario, r.Kernel, r.CPUs)
	p.X.Label.Text = "time since start (s)"
	p.Y.Label.Text = "backlog (namespaces released, not yet freed)"
	p.Y.Tick.Marker = plainTicks{}
	p.Legend.Top = true
	var lines []any
	for _, run := range r.Runs {
		if len(run.Series) == 0 {
			continue
		}
		xy := make(plotter.XYs, len(run.Series))
		for i, s := range run.Series {
			xy[i].X, xy[i].Y = float64(s.TNS)/1e9, float64(s.Backlog)
		}
		label := fmt.Sprintf("%s, %d×%d, %s", run.Mode, run.Workers, run.PerWorker, run.Payload)
		if run.Round > 1 {
			label += fmt.Sprintf(", round %d", run.Round)
		}
		lines = append(lines, label, xy)
	}
	if len(lines) == 0 {
		return nil, errors.New("the netns report has no backlog series: its runs stopped before their first sample, or the slab counts were not readable")
	}
	if err := plotutil.AddLines(p, lines...); err != nil {
		return nil, err
	}
	p.X.Min, p.Y.Min = 0, 0
	return p, nil
}

// createRate plots netns create's creation rate against the namespaces
// made, and the exec step's beside it.
func createRate(r *netnsbench.Report) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("devbulk netns create on %s (%d CPUs)", r.Kernel, r.CPUs)
	p.X.Label.Text = "namespaces created"
	p.Y.Label.Text = "netns/s over each step"
	p.Y.Tick.Marker = plainTicks{}
	var lines []any
	curve := func(pts []netnsbench.RatePoint) plotter.XYs {
		xy := make(plotter.XYs, len(pts))
		for i, pt := range pts {
			xy[i].X, xy[i].Y = float64(pt.Created), pt.NetnsPerSec
		}
		return xy
	}
	for _, run := range r.Runs {
		of := run.Payload
		if run.Round > 1 {
			of += fmt.Sprintf(", round %d", run.Round)
		}
		if len(run.Rate) > 0 {
			lines = append(lines, fmt.Sprintf("create (%s)", of), curve(run.Rate))
		}
		if len(run.ExecRate) > 0 {
			lines = append(lines, fmt.Sprintf("exec step (%s): %s", of, run.ExecStep), curve(run.ExecRate))
		}
	}
	if len(lines) == 0 {
		return nil, errors.New("the netns create report has no rate curve")
	}
	if err := plotutil.AddLinePoints(p, lines...); err != nil {
		return nil, err
	}
	p.X.Min, p.Y.Min = 0, 0
	return p, nil
}

// plainTicks are gonum's, labelled without trailing zeros (gonum writes
// 250.00 for a step of 250).
type plainTicks struct{}

func (plainTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) { // every figure the same (all 0): gonum panics on an empty range
		hi = lo + 1
	}
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = strconv.FormatFloat(ts[i].Value, 'f', -1, 64)
		}
	}
	return ts
}

// Check plots each benchmark's current median as a percentage of the
// baseline's (100%), in horizontal bars with the current 95% interval.
func Check(c *check.Report) (*plot.Plot, error) {
	if c.Baseline == nil {
		return nil, errors.New("a check without a baseline has nothing to compare: plot the output of check --baseline FILE --format json")
	}
	title := fmt.Sprintf("devbulk check: kernel %s against baseline %s", c.Current.Meta.Kernel, c.Baseline.Kernel)
	return comparisonBars(title, "the baseline's", c.Threshold, []series{{"current, with its 95% interval", c}})
}

// Matrix plots a kernel matrix as grouped bars: for each benchmark, every
// configuration's median as a percentage of the first's, with its 95%
// interval.
func Matrix(m *check.Matrix) (*plot.Plot, error) {
	var ss []series
	first := ""
	for i, c := range m.Columns {
		switch {
		case c.Against == nil:
		case c.Against.Baseline == nil:
			first = c.Label
		default:
			ss = append(ss, series{fmt.Sprintf("%c %s", 'A'+i, c.Label), c.Against})
		}
	}
	if len(ss) == 0 {
		return nil, errors.New("the matrix has no configuration to compare with the first")
	}
	return comparisonBars("devbulk check: kernel configurations against "+first, "the first configuration's", m.Threshold, ss)
}

// series is one set of bars: a comparison with the reference.
type series struct {
	label string
	r     *check.Report
}

// benchKey names one benchmark of a check report.
type benchKey struct{ scenario, bench string }

// comparisonBars draws, for each benchmark of the first series, a bar per
// series (adjacent rows, one colour each): its median as a percentage of
// the reference's, with its 95% interval; a line marks the reference
// (100%) and a dashed one the threshold.
func comparisonBars(title, reference string, threshold float64, ss []series) (*plot.Plot, error) {
	keys, labels := benchKeys(ss)
	if len(keys) == 0 {
		return nil, errors.New("no benchmark is in both the reference and the compared run")
	}
	// Nominal rows count from the bottom: the first benchmark's rows go on
	// top, its first series first.
	rows := len(keys) * len(ss)
	names := make([]string, rows)
	for k := range keys {
		names[rows-1-k*len(ss)] = labels[k]
	}
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = fmt.Sprintf("time per device or namespace, %% of %s median (threshold %g%%)", reference, threshold)
	p.Legend.Top = true
	var all []plot.Plotter
	for si, s := range ss {
		b, eb, err := seriesBars(s, keys, func(k int) int { return rows - 1 - (k*len(ss) + si) }, rows)
		if err != nil {
			return nil, err
		}
		b.Color = plotutil.Color(si + 1)
		all = append(all, b, eb)
		p.Legend.Add(s.label, b)
	}
	if err := referenceLines(p, all, rows, threshold); err != nil {
		return nil, err
	}
	p.X.Min = 0
	p.X.Tick.Marker = plot.ConstantTicks(percentTicks(p.X.Max))
	p.NominalY(names...)
	p.Y.Tick.Label.Font.Size = vg.Points(8)
	return p, nil
}

// benchKeys lists the benchmarks of the first series that have both sides,
// with their labels.
func benchKeys(ss []series) ([]benchKey, []string) {
	var keys []benchKey
	var labels []string
	for _, sc := range ss[0].r.Scenarios {
		for _, cmp := range sc.Comparisons {
			if cmp.Base != nil && cmp.Cur != nil && cmp.Base.Median > 0 {
				keys = append(keys, benchKey{sc.Name, cmp.Benchmark})
				verdict := cmp.Verdict
				if len(ss) > 1 {
					verdict = "" // several verdicts: each bar's own tells
				}
				labels = append(labels, shortName(sc.Name, cmp.Benchmark, verdict))
			}
		}
	}
	return keys, labels
}

// find is the comparison of benchmark k in r, or nil.
func find(r *check.Report, k benchKey) *check.Comparison {
	for _, s := range r.Scenarios {
		for i, cmp := range s.Comparisons {
			if s.Name == k.scenario && cmp.Benchmark == k.bench {
				return &s.Comparisons[i]
			}
		}
	}
	return nil
}

// seriesBars is one series' bars (benchmark k on row rowOf(k) of rows)
// and their 95% intervals, as percentages of the reference's medians.
func seriesBars(s series, keys []benchKey, rowOf func(k int) int, rows int) (*plotter.BarChart, *plotter.XErrorBars, error) {
	vals := make(plotter.Values, rows)
	errs := make(plotter.XErrors, len(keys))
	pts := make(plotter.XYs, len(keys))
	for k, key := range keys {
		row := rowOf(k)
		pts[k].Y = float64(row)
		cmp := find(s.r, key)
		if cmp == nil || cmp.Cur == nil || cmp.Base == nil || cmp.Base.Median <= 0 {
			continue
		}
		pct := 100 * cmp.Cur.Median / cmp.Base.Median
		lo, hi := pct, pct
		if cmp.Cur.Lo != nil && cmp.Cur.Hi != nil {
			lo, hi = 100**cmp.Cur.Lo/cmp.Base.Median, 100**cmp.Cur.Hi/cmp.Base.Median
		}
		if math.IsInf(hi, 0) || math.IsNaN(lo+hi+pct) {
			return nil, nil, fmt.Errorf("%s %s: %g against a reference of %g is no percentage to draw", key.scenario, key.bench, cmp.Cur.Median, cmp.Base.Median)
		}
		vals[row], pts[k].X = pct, pct
		errs[k] = struct{ Low, High float64 }{pct - lo, hi - pct}
	}
	b, err := plotter.NewBarChart(vals, vg.Points(9))
	if err != nil {
		return nil, nil, err
	}
	b.Horizontal, b.LineStyle.Width = true, 0
	eb, err := plotter.NewXErrorBars(struct {
		plotter.XYer
		plotter.XErrorer
	}{pts, errs})
	return b, eb, err
}

// referenceLines adds the bars, a line at the reference (100%) and a
// dashed one at the threshold, and their legends.
func referenceLines(p *plot.Plot, bars []plot.Plotter, rows int, threshold float64) error {
	vline := func(x float64) (*plotter.Line, error) {
		return plotter.NewLine(plotter.XYs{{X: x, Y: -0.5}, {X: x, Y: float64(rows) - 0.5}})
	}
	ref, err := vline(100)
	if err != nil {
		return err
	}
	ref.LineStyle.Color, ref.LineStyle.Width = plotutil.Color(0), vg.Points(1.5)
	limit, err := vline(100 + threshold)
	if err != nil {
		return err
	}
	limit.LineStyle.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	p.Add(append(bars, ref, limit, plotter.NewGrid())...)
	p.Legend.Add("reference (100%)", ref)
	p.Legend.Add(fmt.Sprintf("threshold (%g%% slower)", threshold), limit)
	return nil
}

// percentTicks puts a tick every 50%, or every 100, 200, 400%… as the
// range grows, so that a regression of a thousandfold still gets a dozen
// ticks (a fixed 50% step once made one check document ask for 4e11).
func percentTicks(max float64) []plot.Tick {
	step := 50.0
	for max/step > 12 {
		step *= 2
	}
	var ticks []plot.Tick
	for v := 0.0; v <= max; v += step {
		t := plot.Tick{Value: v}
		if step >= 100 || int(v)%100 == 0 {
			t.Label = fmt.Sprintf("%.0f%%", v)
		}
		ticks = append(ticks, t)
	}
	return ticks
}

// shortName labels a benchmark: the scenario, then the name's values
// without their keys.
func shortName(scenario, bench, verdict string) string {
	parts := strings.Split(bench, "/")
	for i, part := range parts {
		if _, v, ok := strings.Cut(part, "="); ok {
			parts[i] = v
		}
	}
	label := scenario + ": " + strings.Join(parts, " ")
	if verdict == check.Regression || verdict == check.Improvement {
		label += " (" + verdict + ")"
	}
	return label
}

// Size is the drawing size of a chart: taller for many bars.
func Size(p *plot.Plot) (vg.Length, vg.Length) {
	h := 5 * vg.Inch
	if n := len(p.Y.Tick.Marker.Ticks(p.Y.Min, p.Y.Max)); n > 20 {
		h = vg.Length(n) * vg.Points(16)
	}
	return 9 * vg.Inch, h
}

// WriteSVG writes the chart as SVG, with its fonts embedded: the text was
// laid out with their metrics, and a browser's substitute font would run
// past the edges. The legend goes to the right of the plot, never over its
// lines.
func WriteSVG(w io.Writer, p *plot.Plot) error {
	width, height := Size(p)
	legend := legendWidth(p)
	c := vgsvg.NewWith(vgsvg.UseWH(width+legend, height))
	drawBeside(p, draw.New(outlined{c}), legend)
	_, err := c.WriteTo(w)
	return err
}

// legendWidth is the room the legend needs beside the plot.
func legendWidth(p *plot.Plot) vg.Length {
	r := p.Legend.Rectangle(draw.New(vgsvg.New(9*vg.Inch, 5*vg.Inch)))
	if w := r.Max.X - r.Min.X; w > 0 {
		return w + vg.Points(12)
	}
	return 0
}

// drawBeside draws p in c less a strip of width legend on the right, and
// p's legend in that strip; it returns the two areas.
func drawBeside(p *plot.Plot, c draw.Canvas, legend vg.Length) (plotArea, legendArea vg.Rectangle) {
	keep := p.Legend
	p.Legend = plot.NewLegend() // p.Draw would put it inside the data area
	defer func() { p.Legend = keep }()
	c = draw.Crop(c, 0, 0, 0, -vg.Points(4)) // the title's ascenders
	pc := draw.Crop(c, 0, -legend, 0, 0)
	p.Draw(pc)
	lc := draw.Crop(c, c.Max.X-c.Min.X-legend+vg.Points(6), 0, 0, 0)
	keep.Top, keep.Left, keep.XOffs, keep.YOffs, keep.Padding = true, true, 0, -vg.Points(6), vg.Points(2)
	keep.Draw(lc)
	return pc.Rectangle, lc.Rectangle
}

// FromDocument draws any devbulk result document: a bench report, a netns
// report, or a check with a baseline (check --format json).
func FromDocument(b []byte) (*plot.Plot, error) {
	var probe struct {
		Tool     string          `json:"tool"`
		Scenario string          `json:"scenario"`
		Kind     string          `json:"kind"`
		Current  json.RawMessage `json:"current"`
		Meta     json.RawMessage `json:"meta"`
		Kernels  json.RawMessage `json:"kernels"`
		Specs    json.RawMessage `json:"specs"`
	}
	if err := json.Unmarshal(b, &probe); err != nil {
		return nil, fmt.Errorf("not a JSON result document: %w", err)
	}
	dec := func(v any) error { return json.NewDecoder(bytes.NewReader(b)).Decode(v) }
	switch {
	case probe.Specs != nil:
		var r bisect.Result
		if err := dec(&r); err != nil {
			return nil, err
		}
		return Bisect(&r)
	case probe.Kernels != nil:
		var m check.Matrix
		if err := dec(&m); err != nil {
			return nil, err
		}
		return Matrix(&m)
	case probe.Current != nil:
		var c check.Report
		if err := dec(&c); err != nil {
			return nil, err
		}
		return Check(&c)
	case probe.Meta != nil:
		return nil, errors.New("a check results document (--save) has no comparison: plot the output of check --baseline FILE --format json")
	case probe.Tool == "devbulk" && probe.Scenario != "":
		var r netnsbench.Report
		if err := dec(&r); err != nil {
			return nil, err
		}
		return Netns(&r)
	case probe.Tool == "devbulk" && probe.Kind != "":
		var r bench.Report
		if err := dec(&r); err != nil {
			return nil, err
		}
		if len(r.Profiles()) > 0 {
			return Profile(&r)
		}
		return Bench(&r)
	}
	return nil, errors.New("not a devbulk result document (bench --json, netns --json, check --baseline --format json or check with several --vm-kernel --format json)")
}

// logTicks labels 1, 2 and 5 times each power of ten (plot.LogTicks labels
// only the powers, which leaves a range under one decade unlabelled).
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0 && hi >= lo) {
		return nil
	}
	var ticks []plot.Tick
	for e := math.Floor(math.Log10(lo)); math.Pow(10, e) <= hi; e++ {
		for m := 1; m < 10; m++ {
			v, _ := strconv.ParseFloat(fmt.Sprintf("%de%d", m, int(e)), 64) // 3e-1, not 3*0.1 = 0.30000000000000004
			if v < lo || v > hi {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || m == 2 || m == 5 {
				t.Label = strconv.FormatFloat(v, 'g', -1, 64)
			}
			ticks = append(ticks, t)
		}
	}
	labelled := 0
	for _, t := range ticks {
		if t.Label != "" {
			labelled++
		}
	}
	if labelled < 2 { // a range inside one 1-2-5 step: label every tick
		labelled = 0
		for i := range ticks {
			ticks[i].Label = strconv.FormatFloat(ticks[i].Value, 'g', -1, 64)
			labelled++
		}
	}
	if labelled < 2 { // inside one 1..9 step: linear ticks
		return plainTicks{}.Ticks(lo, hi)
	}
	return ticks
}
