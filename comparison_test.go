package devbulk

import "testing"

// B faster than A reads as "faster than", with the interval inverted; too
// few runs say so and how many.
func TestComparisonWords(t *testing.T) {
	slow := []float64{100, 101, 102, 103, 104}
	fast := []float64{25, 25.5, 26, 24.5, 25.2}
	// 102/25.2 = 4.05; with five a side the interval runs from the 3rd
	// smallest to the 3rd largest of the 25 pairwise ratios: 100/25.5 and
	// 102/24.5.
	for _, tc := range []struct {
		a, b []float64
		want string
	}{
		{fast, slow, "4.05× slower than A (95% CI 3.92–4.16×)"},
		{slow, fast, "4.05× faster than A (95% CI 3.92–4.16×)"},
		{slow[:2], fast[:2], "3.98× faster than A in the median of 2 runs; too few for a confidence interval (use --repeat 5 or more)"},
		{slow, slow, "no significant difference from A (1×, 95% CI 0.971–1.03×)"},
	} {
		if got := Compare("A", "B", tc.a, tc.b).Words("run"); got != tc.want {
			t.Errorf("got  %s\nwant %s", got, tc.want)
		}
	}
}
