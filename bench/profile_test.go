package bench

import (
	"bytes"
	"regexp"
	"testing"

	"github.com/devbulk/devbulk/batch"
	"github.com/devbulk/devbulk/kprofile"
)

// Two profiled cycles of one strategy add up: calls and totals summed,
// per device over both, shares of both walls, and what was not traced;
// the table prints them largest first.
func TestProfilesAddUp(t *testing.T) {
	cycle := func(barrier, kobject, unattributed int64) Cycle {
		return Cycle{Count: 100, Repeat: 1, Delete: Phase{Phase: batch.Phase{Name: "delete", Strategy: "serial", Devices: 100, WallNS: barrier + kobject + unattributed}, UnattributedNS: unattributed, Profile: []kprofile.Entry{{Function: "rcu_barrier", Calls: 100, TotalNS: barrier}, {Function: "netdev_unregister_kobject", Calls: 100, TotalNS: kobject}}}}
	}
	r := &Report{Kind: "dummy", Runs: []Cycle{cycle(1_600_000_000, 100_000_000, 300_000_000), cycle(1_400_000_000, 100_000_000, 500_000_000)}}
	r.Runs[1].Create = Phase{Phase: batch.Phase{Name: "create", Strategy: "pipelined", Devices: 100, WallNS: 50_000_000}, UnattributedNS: 10_000_000, Profile: []kprofile.Entry{{Function: "register_netdevice", Calls: 100, TotalNS: 40_000_000}}}
	pps := r.Profiles()
	if len(pps) != 2 || pps[0].Phase != "create" || pps[0].Entries[0].PerDeviceNS != 400_000 || pps[0].Entries[0].Share != 0.8 {
		t.Fatalf("create profile %+v", pps)
	}
	pps = pps[1:]
	if len(pps) != 1 || pps[0].Cycles != 2 || pps[0].WallNS != 4_000_000_000 || pps[0].UnattributedNS != 800_000_000 {
		t.Fatalf("profiles %+v", pps)
	}
	top := pps[0].Entries[0]
	if top.Function != "rcu_barrier" || top.Calls != 200 || top.TotalNS != 3_000_000_000 || top.PerDeviceNS != 15_000_000 || top.Share != 0.75 {
		t.Errorf("rcu_barrier: %+v", top)
	}
	var b bytes.Buffer
	if err := r.writeProfiles(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`(?m)^N=100 delete serial: where the time went \(2 cycles, wall 4s in all\):$`,
		`(?m)^N=100 create pipelined: where the time went \(1 cycle, wall 50ms in all\):$`,
		`(?m)^\s+rcu_barrier\s+200\s+3s\s+15ms\s+75\.0%$`,
		`(?m)^\s+netdev_unregister_kobject\s+200\s+200ms\s+1ms\s+5\.0%$`,
		`(?m)^\s+unattributed\s+800ms\s+4ms\s+20\.0%$`,
	} {
		if !regexp.MustCompile(want).Match(b.Bytes()) {
			t.Errorf("no %s in\n%s", want, b.String())
		}
	}
}
