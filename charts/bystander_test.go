package charts

import (
	"strings"
	"testing"

	"github.com/devbulk/devbulk/batch"
	"github.com/devbulk/devbulk/bench"
	"github.com/devbulk/devbulk/bystander"
)

// A bench with a bystander draws its operations over time with each phase
// kind named once in the legend, and the idle p99; one without is refused.
func TestBystanderChart(t *testing.T) {
	idle := &bystander.Stats{Op: "link", Rate: 10, Ops: 100, P99: 30e6}
	cycle := func(from, to int64, strategy string) bench.Cycle {
		return bench.Cycle{Count: 1000,
			Create: bench.Phase{Phase: batch.Phase{Name: "create", Strategy: "pipelined"}, Bystander: &bystander.Stats{From: from, To: from + 1e8}},
			Delete: bench.Phase{Phase: batch.Phase{Name: "delete", Strategy: strategy}, Bystander: &bystander.Stats{From: from + 2e8, To: to}}}
	}
	r := &bench.Report{Kind: "ifb", BystanderIdle: idle, Runs: []bench.Cycle{cycle(1e10, 1.1e10, "group"), cycle(1.2e10, 1.3e10, "group")},
		BystanderTrace: []bystander.Point{{At: 0, Latency: 15e6}, {At: 1e8, Latency: 0}, {At: 1.05e10, Latency: 600e6}}}
	p, err := Bystander(r)
	if err != nil {
		t.Fatal(err)
	}
	all := drawnText(p)
	for _, want := range []string{"create pipelined", "delete group", "link operations", "idle p99", "a link bystander at 10/s"} {
		if n := strings.Count(all, want); n != 1 {
			t.Errorf("%q %d times in the chart, want once", want, n)
		}
	}
	if _, err := Bystander(&bench.Report{Kind: "ifb"}); err == nil {
		t.Error("a bench without a bystander was drawn")
	}
}
