package check

import (
	"slices"
	"testing"

	"github.com/devbulk/devbulk/batch"
	"github.com/devbulk/devbulk/bench"
	"github.com/devbulk/devbulk/bystander"
	"github.com/devbulk/devbulk/kernlog"
	"github.com/devbulk/devbulk/kprofile"
)

// A profiled cycle gives a line per function of each phase: the create
// phase's apart from a delete of the same strategy name (pipelined is both).
func TestBenchLinesProfiles(t *testing.T) {
	prof := []kprofile.Entry{{Function: "register_netdevice", TotalNS: 4000}}
	r := &bench.Report{Kind: "dummy", Runs: []bench.Cycle{{Count: 2,
		Create: bench.Phase{Phase: batch.Phase{Name: "create", Strategy: "pipelined", Devices: 2, WallNS: 10000}, Profile: prof},
		Delete: bench.Phase{Phase: batch.Phase{Name: "delete", Strategy: "pipelined", Devices: 2, WallNS: 20000}, Profile: []kprofile.Entry{{Function: "rcu_barrier", TotalNS: 8000}}}}}}
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

// A bench with a bystander gives a line for its idle baseline and one per
// phase it watched, whose ns/op (what a check compares and gates) is the
// bystander's p99.
func TestBenchLinesBystander(t *testing.T) {
	st := func(p99 int64) *bystander.Stats {
		return &bystander.Stats{Op: "link", Rate: 10, Ops: 5, P50: 1, P99: p99, Max: p99}
	}
	r := &bench.Report{Kind: "ifb", BystanderIdle: st(30e6), Runs: []bench.Cycle{{Count: 1000,
		Create: bench.Phase{Phase: batch.Phase{Name: "create", Strategy: "pipelined", Devices: 1000, WallNS: 10000}, Bystander: st(20e6)},
		Delete: bench.Phase{Phase: batch.Phase{Name: "delete", Strategy: "group-w100", Devices: 1000, WallNS: 20000}, Bystander: st(600e6)}}}}
	got := map[string]float64{}
	for _, l := range BenchLines(r) {
		got[l.Name] = l.Values[0].Value
	}
	for name, p99 := range map[string]float64{
		"Bystander/op=link/phase=idle/kind=ifb":                     30e6,
		"Bystander/op=link/phase=create-pipelined/kind=ifb/n=1000":  20e6,
		"Bystander/op=link/phase=delete-group-w100/kind=ifb/n=1000": 600e6,
	} {
		if got[name] != p99 {
			t.Errorf("%s: %v, want %v (lines %v)", name, got[name], p99, got)
		}
	}
}

// The table's last line says what the kernel complained of, that it read
// the log and found nothing, or that the results do not say (an older
// devbulk's document, a LAVA export).
func TestKernelLogLine(t *testing.T) {
	read := &LogRead{Records: 3}
	for _, c := range []struct {
		scenarios []Scenario
		want      string
	}{
		{[]Scenario{{Name: "a", KernelLog: read}, {Name: "b", Skip: "no"}}, "kernel log: no complaint while the scenarios ran"},
		{[]Scenario{{Name: "a", KernelLog: read, Findings: []kernlog.Finding{{}, {}}}, {Name: "b", KernelLog: read}},
			"kernel log: 2 complaints in 1 of 2 scenarios (KERNEL rows above; each report in the results' findings)"},
		{[]Scenario{{Name: "a"}}, "kernel log: not known (these results do not say what the kernel complained of)"},
		{[]Scenario{{Name: "a", Skip: "no VM"}}, "kernel log: no scenario ran"},
		{[]Scenario{{Name: "a", KernelLog: read}, {Name: "b", KernelLog: &LogRead{Unread: "/dev/kmsg: EPERM"}}, {Name: "c"}},
			"kernel log: no complaint while the scenarios ran; not read during b (/dev/kmsg: EPERM); not known for c"},
	} {
		if got := (&Results{Scenarios: c.scenarios}).kernelLog(); got != c.want {
			t.Errorf("got %q\nwant %q", got, c.want)
		}
	}
}
