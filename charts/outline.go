package charts

import (
	xfont "golang.org/x/image/font"
	"golang.org/x/image/font/sfnt"
	"golang.org/x/image/math/fixed"

	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
)

// outlined draws every text as the outlines of its glyphs, in the font the
// layout measured, so that the drawing looks the same in every viewer:
// librsvg (rsvg-convert, ImageMagick, GNOME's viewers) ignores an SVG's
// embedded @font-face and substitutes a wider font (DejaVu Serif), which
// ran legends, row labels and titles past the edges.
type outlined struct{ vg.CanvasSizer }

func (c outlined) FillString(f font.Face, pt vg.Point, s string) {
	if path := textPath(f, pt, s); len(path) > 0 {
		c.Fill(path)
	}
}

// textPath is the outline of s drawn in f with its baseline starting at pt.
func textPath(f font.Face, pt vg.Point, s string) vg.Path {
	var (
		buf     sfnt.Buffer
		ppem    = fixed.Int26_6(f.Face.UnitsPerEm()) // as font.Face.Width measures
		unit    = f.Font.Size / vg.Length(ppem)
		path    vg.Path
		x       = pt.X
		prev    sfnt.GlyphIndex
		hasPrev bool
	)
	for _, r := range s {
		idx, err := f.Face.GlyphIndex(&buf, r)
		if err != nil {
			continue
		}
		if hasPrev {
			if k, err := f.Face.Kern(&buf, prev, idx, ppem, xfont.HintingNone); err == nil {
				x += vg.Length(k) * unit
			}
		}
		at := func(q fixed.Point26_6) vg.Point { // sfnt's y grows downwards
			return vg.Point{X: x + vg.Length(q.X)*unit, Y: pt.Y - vg.Length(q.Y)*unit}
		}
		segs, err := f.Face.LoadGlyph(&buf, idx, ppem, nil)
		if err == nil {
			open := false
			for _, sg := range segs {
				switch sg.Op {
				case sfnt.SegmentOpMoveTo:
					if open {
						path.Close()
					}
					path.Move(at(sg.Args[0]))
					open = true
				case sfnt.SegmentOpLineTo:
					path.Line(at(sg.Args[0]))
				case sfnt.SegmentOpQuadTo:
					path.QuadTo(at(sg.Args[0]), at(sg.Args[1]))
				case sfnt.SegmentOpCubeTo:
					path.CubeTo(at(sg.Args[0]), at(sg.Args[1]), at(sg.Args[2]))
				}
			}
			if open {
				path.Close()
			}
		}
		if adv, err := f.Face.GlyphAdvance(&buf, idx, ppem, xfont.HintingNone); err == nil {
			x += vg.Length(adv) * unit
		}
		prev, hasPrev = idx, true
	}
	return path
}
