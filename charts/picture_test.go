package charts

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/image/font/sfnt"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// affine is a 2D transform: x' = a x + c y + e, y' = b x + d y + f.
type affine struct{ a, b, c, d, e, f float64 }

func (m affine) apply(p vg.Point) vg.Point {
	x, y := float64(p.X), float64(p.Y)
	return vg.Point{X: vg.Length(m.a*x + m.c*y + m.e), Y: vg.Length(m.b*x + m.d*y + m.f)}
}

// text is one FillString: its string and the bounds of its glyphs' ink on
// the canvas.
type text struct {
	s string
	r vg.Rectangle
}

// recorder passes every call to the canvas it wraps and notes where each
// text's glyphs land, through the transforms in force. face, when set,
// replaces the font a text is drawn in (not the one it was laid out with).
type recorder struct {
	vg.CanvasSizer
	m     affine
	stack []affine
	texts []text
	face  *sfnt.Font
}

func (r *recorder) Push() { r.stack = append(r.stack, r.m); r.CanvasSizer.Push() }
func (r *recorder) Pop() {
	r.m = r.stack[len(r.stack)-1]
	r.stack = r.stack[:len(r.stack)-1]
	r.CanvasSizer.Pop()
}
func (r *recorder) Scale(x, y float64) {
	r.m.a, r.m.b, r.m.c, r.m.d = r.m.a*x, r.m.b*x, r.m.c*y, r.m.d*y
	r.CanvasSizer.Scale(x, y)
}
func (r *recorder) Translate(p vg.Point) {
	x, y := float64(p.X), float64(p.Y)
	r.m.e, r.m.f = r.m.e+r.m.a*x+r.m.c*y, r.m.f+r.m.b*x+r.m.d*y
	r.CanvasSizer.Translate(p)
}
func (r *recorder) Rotate(t float64) {
	s, c := math.Sincos(t)
	m := r.m
	r.m.a, r.m.b, r.m.c, r.m.d = m.a*c+m.c*s, m.b*c+m.d*s, -m.a*s+m.c*c, -m.b*s+m.d*c
	r.CanvasSizer.Rotate(t)
}
func (r *recorder) FillString(f font.Face, pt vg.Point, s string) {
	if r.face != nil {
		f.Face = r.face
	}
	box := vg.Rectangle{Min: vg.Point{X: vg.Length(math.Inf(1)), Y: vg.Length(math.Inf(1))}, Max: vg.Point{X: vg.Length(math.Inf(-1)), Y: vg.Length(math.Inf(-1))}}
	for _, comp := range textPath(f, pt, s) {
		for _, q := range append([]vg.Point{comp.Pos}, comp.Control...) {
			if comp.Type == vg.CloseComp {
				continue
			}
			q = r.m.apply(q)
			box.Min.X, box.Min.Y = min(box.Min.X, q.X), min(box.Min.Y, q.Y)
			box.Max.X, box.Max.Y = max(box.Max.X, q.X), max(box.Max.Y, q.Y)
		}
	}
	r.texts = append(r.texts, text{s, box})
	r.CanvasSizer.FillString(f, pt, s)
}

// margin surrounds the chart in its picture: ink there is drawn outside it.
const margin = 24 // points

// picture draws p as WriteSVG lays it out, with vgimg, on a canvas a margin
// wider on every side; it returns the image and what was noted of it.
func picture(p *plot.Plot, face *sfnt.Font) (img image.Image, chart, legendArea vg.Rectangle, r *recorder) {
	w, h := Size(p)
	legend := legendWidth(p)
	c := vgimg.NewWith(vgimg.UseWH(w+legend+2*margin, h+2*margin), vgimg.UseDPI(96), vgimg.UseBackgroundColor(color.White))
	r = &recorder{CanvasSizer: c, m: affine{a: 1, d: 1}, face: face}
	inner := draw.Crop(draw.New(r), margin, -margin, margin, -margin)
	_, legendArea = drawBeside(p, inner, legend)
	return c.Image(), inner.Rectangle, legendArea, r
}

// problems lists what a person would see wrong in the picture.
func problems(p *plot.Plot, img image.Image, chart, legendArea vg.Rectangle, r *recorder) []string {
	var out []string
	// Ink in the margin: something is cut off in the real drawing.
	px := func(l vg.Length) int { return int(math.Round(l.Dots(96))) }
	b := img.Bounds()
	inChart := image.Rect(px(chart.Min.X), b.Max.Y-px(chart.Max.Y), px(chart.Max.X), b.Max.Y-px(chart.Min.Y))
	ink := map[string]int{}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if (image.Point{x, y}).In(inChart) {
				continue
			}
			if cr, cg, cb, _ := img.At(x, y).RGBA(); cr&cg&cb < 0xf000 {
				side := "left"
				switch {
				case y < inChart.Min.Y:
					side = "top"
				case y >= inChart.Max.Y:
					side = "bottom"
				case x >= inChart.Max.X:
					side = "right"
				}
				ink[side]++
			}
		}
	}
	for side, n := range ink {
		out = append(out, fmt.Sprintf("%d pixels drawn past the %s edge", n, side))
	}
	// Each text inside the chart, on no other text.
	for i, t := range r.texts {
		if t.r.Min.X < chart.Min.X || t.r.Max.X > chart.Max.X || t.r.Min.Y < chart.Min.Y || t.r.Max.Y > chart.Max.Y {
			out = append(out, fmt.Sprintf("text %q runs past the edge (%.1f..%.1f × %.1f..%.1f in %.1f..%.1f × %.1f..%.1f)", t.s,
				t.r.Min.X, t.r.Max.X, t.r.Min.Y, t.r.Max.Y, chart.Min.X, chart.Max.X, chart.Min.Y, chart.Max.Y))
		}
		for _, u := range r.texts[i+1:] {
			if t.r.Min.X < u.r.Max.X && u.r.Min.X < t.r.Max.X && t.r.Min.Y < u.r.Max.Y && u.r.Min.Y < t.r.Max.Y {
				out = append(out, fmt.Sprintf("texts %q and %q overlap", t.s, u.s))
			}
		}
	}
	// Legend entries tell their lines apart.
	var entries []string
	for _, t := range r.texts {
		if t.r.Min.X >= legendArea.Min.X {
			if slices.Contains(entries, t.s) {
				out = append(out, fmt.Sprintf("legend entry %q twice", t.s))
			}
			entries = append(entries, t.s)
		}
	}
	// A numeric axis has at least two labels to read values off.
	for name, ax := range map[string]*plot.Axis{"x": &p.X, "y": &p.Y} {
		labels := 0
		for _, t := range ax.Tick.Marker.Ticks(ax.Min, ax.Max) {
			if t.Label != "" && t.Value >= ax.Min && t.Value <= ax.Max {
				labels++
			}
		}
		if labels < 2 {
			out = append(out, fmt.Sprintf("%s axis with %d tick labels (%g..%g)", name, labels, ax.Min, ax.Max))
		}
	}
	return out
}

// What each document's chart is for: texts it must show.
var pictures = map[string][]string{
	"bench.json":         {"ms per device"},
	"bench-025-045.json": {"ms per device"},
	"netns.json":         {"backlog"},
	"churn-compare.json": {"backlog"},
	"create-exec.json":   {"netns/s", "namespaces created"}, // the creation-rate curve
	"check.json":         {"ifb: Delete ifb group 200 (regression)"},
	"matrix.json":        {"C debian:6.12-rt"},
	"profile.json":       {"unattributed"},
}

// TestPictures looks at every chart kind as a picture: drawn with vgimg as
// WriteSVG lays it out, nothing past its edges, no text on another, legend
// entries distinct, two labels or more on a numeric axis, and the texts the
// chart is for. DEVBULK_CHARTS_DIR=DIR writes the PNGs there.
func TestPictures(t *testing.T) {
	for file, want := range pictures {
		t.Run(file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", file))
			if err != nil {
				t.Fatal(err)
			}
			p, err := FromDocument(b)
			if err != nil {
				t.Fatal(err)
			}
			img, chart, legend, r := picture(p, nil)
			if dir := os.Getenv("DEVBULK_CHARTS_DIR"); dir != "" {
				writePNG(t, filepath.Join(dir, strings.TrimSuffix(file, ".json")+".png"), img)
			}
			for _, pr := range problems(p, img, chart, legend, r) {
				t.Error(pr)
			}
			var all []string
			for _, tx := range r.texts {
				all = append(all, tx.s)
			}
			for _, w := range want {
				if !strings.Contains(strings.Join(all, "\n"), w) {
					t.Errorf("no text %q in the chart", w)
				}
			}
		})
	}
}

// TestPicturesInAnotherFont draws the texts in DejaVu Serif, as librsvg did
// for the SVG with its fonts embedded: what a reader saw.
func TestPicturesInAnotherFont(t *testing.T) {
	b, err := os.ReadFile("/usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf")
	if err != nil {
		t.Skip(err)
	}
	dejavu, err := sfnt.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	for file := range pictures {
		b, _ := os.ReadFile(filepath.Join("testdata", file))
		p, err := FromDocument(b)
		if err != nil {
			t.Fatal(err)
		}
		img, chart, legend, r := picture(p, dejavu)
		if dir := os.Getenv("DEVBULK_CHARTS_DIR"); dir != "" {
			writePNG(t, filepath.Join(dir, strings.TrimSuffix(file, ".json")+"-dejavu.png"), img)
		}
		for _, pr := range problems(p, img, chart, legend, r) {
			t.Logf("%s: %s", file, pr)
		}
	}
}

func writePNG(t *testing.T, path string, img image.Image) {
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := png.Encode(f, img); err != nil {
		t.Fatal(err)
	}
}
