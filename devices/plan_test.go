package devices

import (
	"strings"
	"testing"
)

func TestVlanRunsSpreadOverLowers(t *testing.T) {
	if got := Vlan.LowersNeeded(5000); got != 2 {
		t.Fatalf("5000 vlans need %d lowers, want 2", got)
	}
	lowers := []Lower{{Index: 7, Name: "l0"}, {Index: 8, Name: "l1"}}
	links, err := Vlan.Plan(Options{Count: 5000, Prefix: "v", Lowers: lowers, VlanProto: "802.1ad"})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[[2]int]bool{}
	for i, l := range links {
		key := [2]int{int(l.Lower), int(l.VlanID)}
		if l.VlanID < 1 || l.VlanID > MaxVlanID || seen[key] {
			t.Fatalf("link %d: vlan id %d on lower %d invalid or reused", i, l.VlanID, l.Lower)
		}
		seen[key] = true
	}
	if links[4093].Lower != 7 || links[4094].Lower != 8 || links[4094].VlanID != 1 {
		t.Errorf("the 4095th vlan is id %d on lower %d, want id 1 on the second lower", links[4094].VlanID, links[4094].Lower)
	}
	if _, err := Vlan.Plan(Options{Count: 5000, Prefix: "v", Lowers: lowers[:1]}); err == nil {
		t.Error("5000 vlans planned on one lower device")
	}
}

func TestTunnelRemotesAreDistinctAndInRange(t *testing.T) {
	links, err := Gre.Plan(Options{Count: maxTunnels, Prefix: "g"})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, l := range links {
		if !benchRange.Contains(l.Remote) || seen[l.Remote.String()] {
			t.Fatalf("remote %s out of 198.18.0.0/15 or reused", l.Remote)
		}
		seen[l.Remote.String()] = true
	}
	if _, err := Gre.Plan(Options{Count: maxTunnels + 1, Prefix: "g"}); err == nil {
		t.Error("more tunnels than remotes planned")
	}
}

func TestValidateNamesTheLimit(t *testing.T) {
	err := Ifb.Validate(Options{Count: 10, Prefix: "abcdefghijklmno"})
	if err == nil || !strings.Contains(err.Error(), "at most 15") {
		t.Errorf("16-byte names: %v", err)
	}
	if err := Veth.Validate(Options{Count: 10, Prefix: "abcdefghijklm"}); err != nil {
		t.Errorf("15-byte veth peer names refused: %v", err)
	}
}
