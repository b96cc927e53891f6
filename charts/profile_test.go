package charts

import (
	"strings"
	"testing"

	"github.com/devbulk/devbulk/batch"
	"github.com/devbulk/devbulk/bench"
	"github.com/devbulk/devbulk/kprofile"
)

// A profiled bench is a stacked bar per phase (creates and deletes), the segments named
// in the legend, the phases labelled with their time per device.
func TestProfileChart(t *testing.T) {
	phase := func(strategy string, wall int64, entries ...kprofile.Entry) bench.Cycle {
		var traced int64
		for _, e := range entries {
			traced += e.TotalNS
		}
		return bench.Cycle{Count: 100, Delete: bench.Phase{Phase: batch.Phase{Name: "delete", Strategy: strategy, Devices: 100, WallNS: wall}, UnattributedNS: wall - traced, Profile: entries}}
	}
	r := &bench.Report{Kind: "dummy", Runs: []bench.Cycle{
		phase("serial", 2e9, kprofile.Entry{Function: "rcu_barrier", Calls: 100, TotalNS: 1.7e9}, kprofile.Entry{Function: "synchronize_rcu_expedited", Calls: 300, TotalNS: 0.1e9}),
		phase("group", 30e6, kprofile.Entry{Function: "netdev_unregister_kobject", Calls: 100, TotalNS: 18e6}, kprofile.Entry{Function: "rcu_barrier", Calls: 1, TotalNS: 2e6}),
	}}
	r.Runs[0].Create = bench.Phase{Phase: batch.Phase{Name: "create", Strategy: "pipelined", Devices: 100, WallNS: 20e6}, UnattributedNS: 5e6, Profile: []kprofile.Entry{{Function: "register_netdevice", Calls: 100, TotalNS: 15e6}}}
	p, err := Profile(r)
	if err != nil {
		t.Fatal(err)
	}
	all := drawnText(p)
	for _, want := range []string{"rcu_barrier", "synchronize_rcu_expedited", "netdev_unregister_kobject", "other traced", "unattributed",
		"N=100 delete serial (20ms/device)", "N=100 delete group (300µs/device)", "N=100 create pipelined (200µs/device)",
		"register_netdevice", "share of the phase"} {
		if !strings.Contains(all, want) {
			t.Errorf("no %q in the chart", want)
		}
	}
	if _, err := Profile(&bench.Report{Kind: "dummy"}); err == nil {
		t.Error("a bench without a profile was drawn")
	}
}
