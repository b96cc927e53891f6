package kprofile

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

// fakeMemory is kernel memory as 8-byte words by address.
type fakeMemory map[uint64]uint64

func (m fakeMemory) word(va uint64) (uint64, error) {
	w, ok := m[va]
	if !ok {
		return 0, fmt.Errorf("no word at %x", va)
	}
	return w, nil
}

// The kernel's pernet_list walked as cleanup_net walks it: each entry's
// handler slots read and named by kallsyms, each once; zero slots and
// pointers to data (6.1's id where 6.10+ has exit_batch_rtnl) name nothing.
func TestPernetHandlers(t *testing.T) {
	const head, a, b = 0xffffffff82000000, 0xffffffff82100000, 0xffffffffc0300000
	mem := fakeMemory{
		head: a,
		a:    b, a + 24: 0, a + 32: 0xffffffff81a00010, a + 40: 0, a + 48: 0xffffffff82b00000,
		b: head, b + 24: 0xffffffffc0200100, b + 32: 0xffffffff81a00010, b + 40: 0xffffffff81a00020, b + 48: 0,
	}
	ptrs, err := pernetPointers(mem, head)
	if err != nil {
		t.Fatal(err)
	}
	ks, err := readKallsyms(strings.NewReader(`ffffffff81a00000 T _stext
ffffffff81a00010 t xfrm_net_exit
ffffffff81a00020 t default_device_exit_batch
ffffffff82000000 d pernet_list
ffffffff82b00000 d ipv4_net_id
ffffffffc0200100 t ip_vs_core_pre_exit	[ip_vs]
`))
	if err != nil {
		t.Fatal(err)
	}
	names := ks.handlerNames(ptrs)
	if want := []string{"xfrm_net_exit", "ip_vs_core_pre_exit", "default_device_exit_batch"}; !slices.Equal(names, want) || ks.data["pernet_list"] != head {
		t.Errorf("handlers %v, want %v; pernet_list at %x", names, want, ks.data["pernet_list"])
	}
	// A list that never comes back to its head is not walked for ever.
	loop := fakeMemory{head: a, a: a, a + 24: 0, a + 32: 0, a + 40: 0, a + 48: 0}
	if _, err := pernetPointers(loop, head); err == nil || !strings.Contains(err.Error(), "does not come back") {
		t.Errorf("a looping list: %v", err)
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
