package batch

import (
	"strings"
	"testing"

	"github.com/devbulk/devbulk/devices"
	"github.com/devbulk/devbulk/nlbatch"
)

func TestOwnershipNeedsIndexNameGroupAndPrefix(t *testing.T) {
	s := &Set{Kind: devices.Ifb, Group: 7, Marks: []uint32{9}, Prefix: "dbk",
		Links:  []nlbatch.Link{{Index: 10, Name: "dbk0"}, {Index: 11, Name: "dbk1"}},
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
	}
	for _, c := range cases {
		if got := owns(c.l); got != c.want {
			t.Errorf("owns(%+v) = %v, want %v", c.l, got, c.want)
		}
	}
	all := []nlbatch.Link{{Index: 20, Name: "theirs", Parent: 12}, {Index: 21, Name: "dbk5", Group: 7, Parent: 12},
		{Index: 22, Name: "x", Parent: 3}, {Index: 23, Name: "port", Master: 10}, {Index: 24, Name: "vx", Kind: "vxlan", VxlanLink: 11},
		{Index: 25, Name: "elsewhere", Parent: 10, HasParentNetns: true}, {Index: 10, Name: "dbk0", Group: 7}}
	if got := s.foreignDependents(all); strings.Join(got, ",") != "theirs,dbk5,port,vx" {
		t.Errorf("foreign dependents %v, want [theirs dbk5 port vx]", got)
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
