package devbulk

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/devbulk/devbulk/internal/ratio"
	"github.com/devbulk/devbulk/internal/result"
)

// Comparison is B's times against A's, taken side by side (interleaved,
// the order alternating): Ratio = median(B)/median(A), so above 1 means A
// is faster. Every comparison devbulk reports — two tools, two strategies,
// direct syscalls against shell processes — is one of these.
type Comparison struct {
	A string `json:"a"`
	B string `json:"b"`
	// MedianA and MedianB are the medians, in nanoseconds.
	MedianA int64   `json:"median_a_ns"`
	MedianB int64   `json:"median_b_ns"`
	Ratio   float64 `json:"ratio"`
	// CI95 bounds Ratio with 95% confidence (the Hodges-Lehmann interval
	// that inverts the Mann-Whitney U test); absent with too few runs.
	CI95 []float64 `json:"ci95,omitempty"`
	// P is the two-sided Mann-Whitney U test's p-value.
	P       float64 `json:"p"`
	N       int     `json:"n"` // runs a side (the smaller side)
	Verdict string  `json:"verdict"`
}

// TooFew is the verdict when there are too few runs for a conclusion.
const TooFew = "no conclusion: too few repeats for a confidence interval (use --repeat 5 or more)"

// NoDifference is the verdict when the interval holds 1.
const NoDifference = "no significant difference"

// Compare compares b's times with a's (positive nanoseconds); nil when
// either side has none. The verdict is "A faster", "B faster",
// NoDifference, or TooFew.
func Compare(a, b string, at, bt []float64) *Comparison {
	res, err := ratio.Compare(at, bt)
	if err != nil {
		return nil
	}
	c := &Comparison{A: a, B: b, Ratio: res.Ratio, P: res.P, N: min(len(at), len(bt)),
		MedianA: int64(res.MedianA), MedianB: int64(res.MedianB), CI95: res.CI}
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

// Words states B against A in words, with its interval: "208× slower
// than group (95% CI 205–257×)", "no significant difference from direct
// (1.02×, 95% CI 0.93–1.06×)"; what runs counts, for "2 cycles".
func (c Comparison) Words(runs string) string {
	if c.Verdict == NoDifference {
		return fmt.Sprintf("no significant difference from %s (%.3g×, 95%% CI %s)", c.A, c.Ratio, c.CIText("%.3g", "×"))
	}
	times, how, ci := c.Ratio, "slower than", c.CI95
	if c.Ratio < 1 {
		times, how = 1/c.Ratio, "faster than"
		if ci != nil {
			ci = []float64{1 / ci[1], 1 / ci[0]}
		}
	}
	line := fmt.Sprintf("%.3g× %s %s", times, how, c.A)
	if c.Verdict == TooFew {
		return line + fmt.Sprintf(" in the median of %s; too few for a confidence interval (use --repeat 5 or more)", Plural(c.N, runs))
	}
	return line + fmt.Sprintf(" (95%% CI %s)", Comparison{CI95: ci}.CIText("%.3g", "×"))
}

// CIText is the interval as "lo–hi" in format, with unit after; "-" when
// there is none.
func (c Comparison) CIText(format, unit string) string {
	if len(c.CI95) != 2 {
		return "-"
	}
	return fmt.Sprintf(format+"–"+format+unit, c.CI95[0], c.CI95[1])
}

// PText is the p-value for a table: three decimals, "<0.001" below.
func (c Comparison) PText() string {
	if c.P < 0.001 {
		return "<0.001"
	}
	return fmt.Sprintf("%.3f", c.P)
}

// Plural is "1 cycle", "2 cycles".
func Plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// ComparisonRow is one comparison in a table, after the cells that say
// what was compared (count, phase, strategy).
type ComparisonRow struct {
	Keys []string
	Comparison
}

// WriteComparisons prints rows as a table under title: the key columns
// (heads), the runs each side had (runs names them: "cycles"), both
// medians (under the first row's A and B), the ratio, its 95% CI, p and
// the verdict. Nothing without rows.
func WriteComparisons(w io.Writer, title string, heads []string, runs string, rows []ComparisonRow) error {
	if len(rows) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\n%s\n", title)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	cols := append(slices.Clone(heads), runs, rows[0].A, rows[0].B, "ratio", "95% CI", "p", "verdict")
	fmt.Fprintln(tw, strings.Join(cols, "\t")+"\t")
	for _, r := range rows {
		cells := append(slices.Clone(r.Keys), strconv.Itoa(r.N), result.FormatNS(r.MedianA), result.FormatNS(r.MedianB),
			fmt.Sprintf("%.2f", r.Ratio), r.CIText("%.2f", ""), r.PText(), r.Verdict)
		fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
	}
	return tw.Flush()
}
