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
	r.compare("direct", "exec", func(run Run) string { return run.Mode })
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
	for _, want := range []string{"exec churn: 5× slower than direct (95% CI ", "exec drain: no significant difference from direct",
		// every column a reader cannot read by its name is said in words (issue 40, item 5)
		"mode: direct = devbulk unshares", "devbulk CPU % = ", "user/kernel % = "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
}

// Two payloads side by side: the runs are told apart by payload, the setup
// times compared at p50 and p99, and the table says which payload against
// which, with each run's setup times.
func TestComparePayloads(t *testing.T) {
	r := &Report{Scenario: "churn"}
	for i, ms := range []int64{100, 110, 90, 105, 95} {
		setup := func(k int64) *Latency {
			return &Latency{Count: 10, P50NS: k * ms * 1e4, P99NS: 3 * k * ms * 1e4, MaxNS: 4 * k * ms * 1e4}
		}
		r.Runs = append(r.Runs,
			Run{Mode: "direct", Payload: "veth:1", Round: i + 1, CreateNS: ms * 1e6, DrainNS: (60 + int64(i)) * 1e6, Setup: setup(1)},
			Run{Mode: "direct", Payload: "veth:1:moved", Round: i + 1, CreateNS: 3 * ms * 1e6, DrainNS: (62 - int64(i)) * 1e6, Setup: setup(7)})
	}
	r.compare("veth:1", "veth:1:moved", func(run Run) string { return run.Payload })
	var phases []string
	for _, c := range r.Comparisons {
		phases = append(phases, c.Phase)
		if c.A != "veth:1" || c.B != "veth:1:moved" {
			t.Errorf("%s compares %s with %s", c.Phase, c.B, c.A)
		}
	}
	if strings.Join(phases, ",") != "churn,drain,setup p50,setup p99" {
		t.Fatalf("phases %v", phases)
	}
	if p50 := r.Comparisons[2]; p50.Ratio != 7 || p50.Verdict != "veth:1 faster" {
		t.Errorf("setup p50: %+v", p50)
	}
	var out bytes.Buffer
	if err := r.WriteTable(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"veth:1:moved against veth:1, side by side", "veth:1:moved setup p99: 7× slower than veth:1 (95% CI ",
		"setup p50", "7ms", "21ms", "28ms"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
}
