package kprofile

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// The pernet kprobe's records and kallsyms name the handlers, in the order
// cleanup_net met them, each once; zeros (no such handler) and pointers to
// data (6.1's id where 6.10+ has exit_batch_rtnl) name nothing.
func TestPernetHandlerNames(t *testing.T) {
	trace := `# tracer: nop
#
    kworker/u4:1-45      [001] .....   12.345678: pernet: (ops_exit_list+0x0/0x60) pre_exit=0x0 exit=0xffffffff81a00010 exit_batch=0x0 exit_batch_rtnl=0xffffffff82b00000
    kworker/u4:1-45      [001] .....   12.345700: pernet: (ops_exit_list+0x0/0x60) pre_exit=0xffffffffc0200100 exit=0x0 exit_batch=0xffffffff81a00020 exit_batch_rtnl=0x0
    kworker/u4:1-45      [000] .....   12.400000: pernet: (ops_exit_list+0x0/0x60) pre_exit=0x0 exit=0xffffffff81a00010 exit_batch=0x0 exit_batch_rtnl=0x0
`
	addrs, err := pernetAddrs(strings.NewReader(trace))
	if err != nil {
		t.Fatal(err)
	}
	if len(addrs) != 4 {
		t.Fatalf("addresses %x", addrs)
	}
	kallsyms := `ffffffff81a00000 T _stext
ffffffff81a00010 t xfrm_net_exit
ffffffff81a00020 t default_device_exit_batch
ffffffff82b00000 d ipv4_net_id
ffffffffc0200100 t ip_vs_core_pre_exit	[ip_vs]
`
	names, err := textSymbols(strings.NewReader(kallsyms), addrs)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"xfrm_net_exit", "ip_vs_core_pre_exit", "default_device_exit_batch"}; !slices.Equal(names, want) {
		t.Errorf("handlers %v, want %v", names, want)
	}
}

// Shares are of the roots' time when the phase has no wall of its own
// (the cleanup worker's time): they add up to the whole.
func TestProfileOfTheWorkersTime(t *testing.T) {
	calls := []Call{{"cleanup_net", 2, 1000, 100}, {"xfrm_net_exit", 200, 700, 700}, {"rcu_barrier", 2, 200, 200}}
	pr := profileOf(calls, 1000, 0, 0, 200)
	sum := 0.0
	for _, e := range pr.Entries {
		sum += e.Share
	}
	if pr.Entries[0].Function != "xfrm_net_exit" || pr.Entries[0].PerDeviceNS != 3 || math.Abs(sum-1) > 1e-9 || pr.UnattributedNS != 0 {
		t.Errorf("profile %+v, shares sum to %g", pr, sum)
	}
}
