package ratio

import (
	"math"
	"testing"
)

// The interval's order statistics are the textbook ones: for 5 and 5 the
// 95% interval runs from the 3rd to the 23rd of the 25 pairwise ratios
// (critical U = 2); 4 and 4 give the whole range (1st to 16th); 3 and 3
// give none.
func TestTail(t *testing.T) {
	for _, c := range []struct{ n1, n2, k int }{{5, 5, 3}, {4, 4, 1}, {3, 3, 0}, {6, 6, 6}, {10, 10, 24}} {
		if got := tail(c.n1, c.n2, 0.025); got != c.k {
			t.Errorf("tail(%d, %d) = %d, want %d", c.n1, c.n2, got, c.k)
		}
	}
}

func TestCompare(t *testing.T) {
	a := []float64{100, 102, 98, 101, 99}
	twice := []float64{200, 204, 196, 202, 198}
	r, err := Compare(a, twice)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(r.Ratio-2) > 1e-9 || r.CI == nil || r.CI[0] > 2 || r.CI[1] < 2 || r.CI[0] <= 1 || r.P > 0.01 {
		t.Errorf("b twice a: %+v; want ratio 2 inside a CI above 1, p < 0.01", r)
	}
	same := []float64{101, 99, 100, 103, 97}
	if r, _ := Compare(a, same); r.CI == nil || r.CI[0] >= 1 || r.CI[1] <= 1 || r.P < 0.05 {
		t.Errorf("same distribution: %+v; want a CI around 1 and p >= 0.05", r)
	}
	if r, _ := Compare(a[:3], twice[:3]); r.CI != nil || math.Abs(r.Ratio-2) > 1e-9 {
		t.Errorf("three a side: %+v; want the ratio and no CI", r)
	}
	if _, err := Compare(nil, a); err == nil {
		t.Error("an empty sample compared")
	}
}

// The one rule check and bisect both call a change by: significant, an
// interval that excludes 1, and beyond the threshold; never on too few
// samples to reach Alpha (three a side: p ≥ 0.1 whatever the values).
func TestChanged(t *testing.T) {
	a := []float64{100, 102, 98, 101, 99}
	twice := []float64{200, 204, 196, 202, 198}
	same := []float64{101, 99, 100, 103, 97}
	for _, c := range []struct {
		a, b []float64
		pct  float64
		want bool
	}{
		{a, twice, 25, true},
		{twice, a, 25, true},   // faster is a change too
		{a, twice, 150, false}, // +100% is not beyond 150%
		{a, same, 0, false},
		{a[:3], twice[:3], 25, false},
	} {
		r, err := Compare(c.a, c.b)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Changed(c.pct); got != c.want {
			t.Errorf("%v against %v, threshold %g%%: changed %v, want %v (%+v)", c.b, c.a, c.pct, got, c.want, r)
		}
	}
	if r, _ := Compare(a[:3], twice[:3]); len(r.Warnings) == 0 {
		t.Error("three a side: no warning that they cannot show a difference")
	}
}
