package batch

import (
	"strings"
	"testing"

	"github.com/devbulk/devbulk/devices"
	"github.com/devbulk/devbulk/nlbatch"
)

func TestOwnershipNeedsIndexNameGroupAndPrefix(t *testing.T) {
	s := &Set{Kind: devices.Ifb, Group: 7, Marks: []uint32{9}, Prefix: "dbk",
		Links:  []nlbatch.Link{{Index: 10, Name: "dbk0"}, {Index: 11, Name: "dbk1"}, {Index: 14, Name: "eth0"}},
		Lowers: []nlbatch.Link{{Index: 12, Name: "dbkl0"}}}
	owns := s.owner()
	cases := []struct {
		l    nlbatch.Link
		want bool
	}{
		{nlbatch.Link{Index: 10, Name: "dbk0", Group: 7}, true},
		{nlbatch.Link{Index: 12, Name: "dbkl0", Group: 7}, true},
		{nlbatch.Link{Index: 11, Name: "dbk1", Group: 9}, true},   // moved by a recorded mark
		{nlbatch.Link{Index: 10, Name: "dbk0", Group: 8}, false},  // another group
		{nlbatch.Link{Index: 10, Name: "other", Group: 7}, false}, // renamed, or index reused
		{nlbatch.Link{Index: 13, Name: "dbk0", Group: 7}, false},  // not recorded
		{nlbatch.Link{Index: 14, Name: "eth0", Group: 7}, false},  // recorded, but not a name the run makes
	}
	for _, c := range cases {
		if got := owns(c.l); got != c.want {
			t.Errorf("owns(%+v) = %v, want %v", c.l, got, c.want)
		}
	}
	mine := []nlbatch.Link{{Index: 10, Name: "dbk0", Group: 7}, {Index: 11, Name: "dbk1", Group: 7}, {Index: 12, Name: "dbkl0", Group: 7}}
	all := append([]nlbatch.Link{{Index: 20, Name: "theirs", Parent: 12}, {Index: 21, Name: "dbk5", Group: 7, Parent: 12},
		{Index: 22, Name: "x", Parent: 3}, {Index: 23, Name: "port", Master: 10}, {Index: 24, Name: "vx", Kind: "vxlan", Data: devices.VxlanData{Link: 11}},
		{Index: 25, Name: "elsewhere", Parent: 10, HasParentNetns: true}, {Index: 26, Name: "on-eth0", Parent: 14}}, mine...)
	// eth0 (14) is recorded but not the run's now: what sits on it is not checked.
	if got := s.foreignDependents(mine, all); strings.Join(got, ",") != "dbk5,port,theirs,vx" {
		t.Errorf("foreign dependents %v, want [dbk5 port theirs vx]", got)
	}
	// A veth's peer is the run's, and what sits on the peer is checked.
	v := &Set{Kind: devices.Veth, Group: 7, Prefix: "v", Links: []nlbatch.Link{{Index: 30, Name: "v0", Parent: 31}}}
	vmine := []nlbatch.Link{{Index: 30, Name: "v0", Group: 7, Parent: 31}}
	vall := append([]nlbatch.Link{{Index: 31, Name: "v0p", Parent: 30}, {Index: 32, Name: "onpeer", Parent: 31}}, vmine...)
	if got := v.foreignDependents(vmine, vall); strings.Join(got, ",") != "onpeer" {
		t.Errorf("veth dependents %v, want [onpeer]", got)
	}
}

func TestFreshGroupAvoidsUsedOnes(t *testing.T) {
	links := []nlbatch.Link{{Group: 0}, {Group: 5}}
	seen := map[uint32]bool{}
	for i := 0; i < 1000; i++ {
		g := FreshGroup(links, func(g uint32) bool { return seen[g] })
		if g < 0x10000000 || g == 5 || seen[g] {
			t.Fatalf("group %#x: small, used or taken", g)
		}
		seen[g] = true
	}
}

func TestPercentiles(t *testing.T) {
	v := make([]int64, 100)
	for i := range v {
		v[i] = int64(i + 1)
	}
	if pct(v, 50) != 50 || pct(v, 99) != 99 || pct([]int64{4}, 99) != 4 {
		t.Errorf("p50 %d p99 %d single %d", pct(v, 50), pct(v, 99), pct([]int64{4}, 99))
	}
}

// The batch paths are those the package documentation names one batch for
// all; serial, pipelined and parallel are one batch per device.
func TestOneBatch(t *testing.T) {
	for _, d := range DeleteStrategies() {
		want := d != DeleteSerial && d != DeletePipelined && d != DeleteParallel
		if d.OneBatch() != want {
			t.Errorf("%s: OneBatch %v, want %v", d, d.OneBatch(), want)
		}
	}
}
