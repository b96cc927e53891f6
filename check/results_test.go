package check

import (
	"slices"
	"testing"

	"github.com/devbulk/devbulk/batch"
	"github.com/devbulk/devbulk/bench"
	"github.com/devbulk/devbulk/kprofile"
)

// A profiled cycle gives a line per function of each phase: the create
// phase's apart from a delete of the same strategy name (pipelined is both).
func TestBenchLinesProfiles(t *testing.T) {
	prof := []kprofile.Entry{{Function: "register_netdevice", TotalNS: 4000}}
	r := &bench.Report{Kind: "dummy", Runs: []bench.Cycle{{Count: 2,
		Create: batch.Phase{Name: "create", Strategy: "pipelined", Devices: 2, WallNS: 10000, Profile: prof},
		Delete: batch.Phase{Name: "delete", Strategy: "pipelined", Devices: 2, WallNS: 20000, Profile: []kprofile.Entry{{Function: "rcu_barrier", TotalNS: 8000}}}}}}
	var names []string
	for _, l := range BenchLines(r) {
		names = append(names, l.Name)
	}
	want := []string{"Create/kind=dummy/strategy=pipelined/n=2", "Profile/kind=dummy/strategy=create-pipelined/n=2/fn=register_netdevice",
		"Delete/kind=dummy/strategy=pipelined/n=2", "Profile/kind=dummy/strategy=pipelined/n=2/fn=rcu_barrier"}
	if !slices.Equal(names, want) {
		t.Errorf("lines %q, want %q", names, want)
	}
}
