package charts

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/devbulk/devbulk"
	"github.com/devbulk/devbulk/batch"
	"github.com/devbulk/devbulk/bench"
	"github.com/devbulk/devbulk/check"
	"github.com/devbulk/devbulk/netnsbench"
)

// svgRoot checks that b is well-formed XML and returns its root element's
// name.
func svgRoot(t *testing.T, b []byte) string {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(b))
	root := ""
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return root
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v", err)
		}
		if el, ok := tok.(xml.StartElement); ok && root == "" {
			root = el.Name.Local
		}
	}
}

// drawn is every text the chart draws, as WriteSVG lays it out (the SVG
// holds their outlines, not the texts).
func drawn(p *plot.Plot) []text {
	_, _, _, r := picture(p, nil)
	return r.texts
}

// drawnText is drawn's texts, one a line.
func drawnText(p *plot.Plot) string {
	var all []string
	for _, t := range drawn(p) {
		all = append(all, t.s)
	}
	return strings.Join(all, "\n")
}

// Each fixture draws as an SVG with its title, both axis labels and the
// legend's entries. DEVBULK_CHARTS_DIR=DIR also writes the SVGs there, to
// look at.
func TestCharts(t *testing.T) {
	for file, want := range map[string][]string{
		"bench.json": {"devbulk bench: ifb", "devices per cycle (N)", "ms per device (median of repeats)",
			"create pipelined", "delete group", "delete netns", "iproute2 delete ip link del group", "1000", "0.2"},
		"netns.json": {"devbulk netns churn", "time since start (s)", "backlog (namespaces released, not yet freed)",
			"direct, 2×300, lo-up", "exec, 2×300, lo-up"},
		"check.json": {"devbulk check: kernel", "% of the baseline's median (threshold 10%)", "reference (100%)",
			"current, with its 95% interval", "ifb: Delete ifb group 200 (regression)"},
	} {
		b, err := os.ReadFile(filepath.Join("testdata", file))
		if err != nil {
			t.Fatal(err)
		}
		p, err := FromDocument(b)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		var svg bytes.Buffer
		if err := WriteSVG(&svg, p); err != nil {
			t.Fatal(err)
		}
		if root := svgRoot(t, svg.Bytes()); root != "svg" {
			t.Errorf("%s: root element %q", file, root)
		}
		all := drawnText(p)
		for _, w := range want {
			if !strings.Contains(all, w) {
				t.Errorf("%s: no text %q in the chart; texts:\n%s", file, w, all)
			}
		}
		if dir := os.Getenv("DEVBULK_CHARTS_DIR"); dir != "" {
			os.WriteFile(filepath.Join(dir, strings.TrimSuffix(file, ".json")+".svg"), svg.Bytes(), 0o644)
		}
	}
}

// One count and one value: log axes still get a range, and ticks.
func TestBenchOfOnePoint(t *testing.T) {
	r := &bench.Report{Header: devbulk.Header{Tool: "devbulk", Kernel: "k"}, Kind: "ifb", Runs: []bench.Cycle{{Count: 1,
		Create: bench.Phase{Phase: batch.Phase{Name: "create", Strategy: "pipelined", Devices: 1, WallNS: 50000}}}}}
	p, err := Bench(r)
	if err != nil {
		t.Fatal(err)
	}
	if texts := drawnText(p); !strings.Contains(texts, "0.05") {
		t.Errorf("no tick at the one value (0.05 ms): %q", texts)
	}
}

func TestNotAResultDocument(t *testing.T) {
	for _, doc := range []string{`{"tool":"other"}`, `[1,2]`, `{"meta":{"tool":"devbulk"},"scenarios":[]}`} {
		if _, err := FromDocument([]byte(doc)); err == nil {
			t.Errorf("%s: drawn", doc)
		}
	}
}

// The legend is drawn beside the plot, right of its whole area (9 inches,
// 648 points), so it never covers a line or a bar; the drawing is widened
// to hold it.
func TestLegendBesideThePlot(t *testing.T) {
	b, err := os.ReadFile("testdata/check.json")
	if err != nil {
		t.Fatal(err)
	}
	p, err := FromDocument(b)
	if err != nil {
		t.Fatal(err)
	}
	plotWidth := vg.Length(9 * 72)
	w, _ := Size(p)
	width := w + legendWidth(p)
	x := map[string]vg.Length{}
	for _, tx := range drawn(p) {
		x[tx.s] = tx.r.Min.X - margin // picture draws inside a margin
	}
	if width <= plotWidth {
		t.Errorf("drawing %vpt wide: no room was made beside the %vpt plot", width, plotWidth)
	}
	for _, entry := range []string{"reference (100%)", "current, with its 95% interval"} {
		if got, ok := x[entry]; !ok || got < plotWidth {
			t.Errorf("legend entry %q at x=%v (found %t), want right of the plot (x >= %v)", entry, got, ok, plotWidth)
		}
	}
}

// The kernel's memory per device against N: devbulk's create phases, the
// median of each count's repeats, and MemAvailable taken beside it.
func TestBenchMemory(t *testing.T) {
	create := func(n int, kib, avail float64) bench.Cycle {
		return bench.Cycle{Count: n, Create: bench.Phase{Phase: batch.Phase{Name: "create", Strategy: "pipelined", Devices: n, WallNS: 1e6}, KernelMem: &bench.KernelMem{PerDeviceKiB: kib, AvailablePerDeviceKiB: -avail}},
			Delete: bench.Phase{Phase: batch.Phase{Name: "delete", Strategy: "group", Devices: n, WallNS: 1e6}}}
	}
	r := &bench.Report{Header: devbulk.Header{Tool: "devbulk", Kernel: "k"}, Kind: "ifb",
		Runs: []bench.Cycle{create(1000, 40, 55), create(1000, 44, 60), create(1000, 41, 58), create(100000, 43, 61)}}
	p, err := BenchMemory(r)
	if err != nil {
		t.Fatal(err)
	}
	texts := drawnText(p)
	for _, want := range []string{"KiB per device (median of repeats)", "devices per cycle (N)", "create pipelined", "create pipelined: MemAvailable taken"} {
		if !strings.Contains(texts, want) {
			t.Errorf("no %q in %q", want, texts)
		}
	}
	if strings.Contains(texts, "delete group") {
		t.Errorf("a delete phase has no memory line: %q", texts)
	}
	lines := medianLines(r, func(ph *bench.Phase) (float64, bool) {
		return kmemOf(ph, func(m *bench.KernelMem) float64 { return m.PerDeviceKiB })
	})
	if xy := lines[1].(plotter.XYs); len(xy) != 2 || xy[0] != (plotter.XY{X: 1000, Y: 41}) || xy[1] != (plotter.XY{X: 100000, Y: 43}) {
		t.Errorf("points %v, want the median 41 at 1000 and 43 at 100000", xy)
	}
	if _, err := BenchMemory(&bench.Report{Kind: "ifb", Runs: []bench.Cycle{{Count: 1, Create: bench.Phase{Phase: batch.Phase{Name: "create", Devices: 1}}}}}); err == nil {
		t.Error("a bench without memory figures was drawn")
	}
	withheld := &bench.Report{Kind: "ifb", Runs: []bench.Cycle{{Count: 10, Create: bench.Phase{Phase: batch.Phase{Name: "create", Devices: 10}, KernelMem: &bench.KernelMem{Withheld: "the 10 devices grew 410 KiB, under the 2 MiB from which the figure is stable"}}}}}
	if _, err := BenchMemory(withheld); err == nil || !strings.Contains(err.Error(), "each was withheld (N=10: the 10 devices grew 410 KiB") {
		t.Errorf("a bench whose figures were all withheld: %v", err)
	}
	// Every figure 0 (counters that did not move at N=10): a chart with
	// an axis, not gonum's panic on an empty range.
	zero := &bench.Report{Header: devbulk.Header{Tool: "devbulk", Kernel: "k"}, Kind: "ifb", Runs: []bench.Cycle{create(10, 0, 0)}}
	if p, err := BenchMemory(zero); err != nil {
		t.Fatal(err)
	} else if err := WriteSVG(io.Discard, p); err != nil {
		t.Errorf("all-zero memory figures: %v", err)
	}
}

// devbulk's --svg hands devbulk-plot its report marshalled to JSON, which
// FromDocument reads back: every kind of report draws the same chart that
// way as drawn from the report itself.
func TestReportsDrawTheSameThroughJSON(t *testing.T) {
	load := func(file string, v any) {
		t.Helper()
		b, err := os.ReadFile(filepath.Join("testdata", file))
		if err == nil {
			err = json.Unmarshal(b, v)
		}
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
	}
	var b, prof bench.Report
	var n, ce netnsbench.Report
	var c check.Report
	var m check.Matrix
	load("bench.json", &b)
	load("profile.json", &prof)
	load("netns.json", &n)
	load("create-exec.json", &ce)
	load("check.json", &c)
	load("matrix.json", &m)
	for name, tc := range map[string]struct {
		report any
		draw   func() (*plot.Plot, error)
	}{
		"bench":   {&b, func() (*plot.Plot, error) { return Bench(&b) }},
		"profile": {&prof, func() (*plot.Plot, error) { return Profile(&prof) }},
		"netns":   {&n, func() (*plot.Plot, error) { return Netns(&n) }},
		"create":  {&ce, func() (*plot.Plot, error) { return Netns(&ce) }},
		"check":   {&c, func() (*plot.Plot, error) { return Check(&c) }},
		"matrix":  {&m, func() (*plot.Plot, error) { return Matrix(&m) }},
	} {
		svg := func(p *plot.Plot, err error) []byte {
			t.Helper()
			var out bytes.Buffer
			if err == nil {
				err = WriteSVG(&out, p)
			}
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			return out.Bytes()
		}
		doc, err := json.Marshal(tc.report)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(svg(tc.draw()), svg(FromDocument(doc))) {
			t.Errorf("%s: the chart of the marshalled report differs from the report's", name)
		}
	}
}
