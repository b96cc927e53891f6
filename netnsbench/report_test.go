package netnsbench

import (
	"bytes"
	"strings"
	"testing"

	"github.com/devbulk/devbulk"
)

// Five rounds a side: exec's churn five times direct's is a verdict with an
// interval that excludes 1; drains that overlap are no difference.
func TestCompareModes(t *testing.T) {
	r := &Report{Scenario: "churn"}
	for i, ms := range []int64{100, 110, 90, 105, 95} {
		r.Runs = append(r.Runs,
			Run{Mode: "direct", Round: i + 1, CreateNS: ms * 1e6, DrainNS: (60 + 10*int64(i%2)) * 1e6},
			Run{Mode: "exec", Round: i + 1, CreateNS: 5 * ms * 1e6, DrainNS: (65 - 10*int64(i%2)) * 1e6})
	}
	r.compareModes()
	if len(r.Comparisons) != 2 {
		t.Fatalf("comparisons: %+v", r.Comparisons)
	}
	churn, drain := r.Comparisons[0], r.Comparisons[1]
	if churn.Phase != "churn" || churn.Verdict != "direct faster" || churn.Ratio != 5 || churn.CI95 == nil || churn.CI95[0] <= 1 {
		t.Errorf("churn: %+v", churn)
	}
	if drain.Phase != "drain" || drain.Verdict != devbulk.NoDifference {
		t.Errorf("drain: %+v", drain)
	}
	var out bytes.Buffer
	if err := r.WriteTable(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"exec churn: 5× slower than direct (95% CI ", "exec drain: no significant difference from direct"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
}
