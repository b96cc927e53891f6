package charts

import (
	"bytes"
	"encoding/xml"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/devbulk/devbulk"
	"github.com/devbulk/devbulk/batch"
	"github.com/devbulk/devbulk/bench"
)

// svgTexts parses an SVG document and returns its root element's name and
// every text it draws.
func svgTexts(t *testing.T, b []byte) (string, []string) {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(b))
	root, inText := "", false
	var texts []string
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if root == "" {
				root = tok.Name.Local
			}
			inText = tok.Name.Local == "text"
		case xml.CharData:
			if inText {
				texts = append(texts, string(tok))
			}
		case xml.EndElement:
			inText = false
		}
	}
	return root, texts
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
		root, texts := svgTexts(t, svg.Bytes())
		if root != "svg" {
			t.Errorf("%s: root element %q", file, root)
		}
		all := strings.Join(texts, "\n")
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
		Create: batch.Phase{Name: "create", Strategy: "pipelined", Devices: 1, WallNS: 50000}}}}
	p, err := Bench(r)
	if err != nil {
		t.Fatal(err)
	}
	var svg bytes.Buffer
	if err := WriteSVG(&svg, p); err != nil {
		t.Fatal(err)
	}
	if _, texts := svgTexts(t, svg.Bytes()); !strings.Contains(strings.Join(texts, " "), "0.05") {
		t.Errorf("no tick at the one value (0.05 ms): %v", texts)
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
	var out bytes.Buffer
	if err := WriteSVG(&out, p); err != nil {
		t.Fatal(err)
	}
	plotWidth := float64(9 * 72)
	dec := xml.NewDecoder(&out)
	x := map[string]float64{}
	var at float64
	width := 0.0
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			for _, a := range tok.Attr {
				switch {
				case tok.Name.Local == "svg" && a.Name.Local == "width":
					width, _ = strconv.ParseFloat(strings.TrimSuffix(a.Value, "pt"), 64)
				case tok.Name.Local == "text" && a.Name.Local == "x":
					at, _ = strconv.ParseFloat(a.Value, 64)
				}
			}
		case xml.CharData:
			x[string(tok)] = at
		}
	}
	if width <= plotWidth {
		t.Errorf("drawing %gpt wide: no room was made beside the %gpt plot", width, plotWidth)
	}
	for _, entry := range []string{"reference (100%)", "current, with its 95% interval"} {
		if got, ok := x[entry]; !ok || got < plotWidth {
			t.Errorf("legend entry %q at x=%g (found %t), want right of the plot (x >= %g)", entry, got, ok, plotWidth)
		}
	}
}
