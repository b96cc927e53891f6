package devices

import (
	"net/netip"
	"testing"
)

// Peers says which kinds make a peer with each link: exactly those whose
// plan names one (batch counts, checks and deletes the peers by it).
func TestPeersMatchThePlan(t *testing.T) {
	for _, k := range All() {
		o := Options{Count: 1, Prefix: "p", RemoteBase: netip.MustParseAddr("198.18.0.1")}
		for i := 0; i < k.LowersNeeded(1); i++ {
			o.Lowers = append(o.Lowers, Lower{Index: int32(100 + i), Name: "low"})
		}
		links, err := k.Plan(o)
		if err != nil {
			t.Fatalf("%s: %v", k.Name, err)
		}
		if got := links[0].Peer != ""; got != k.Peers {
			t.Errorf("%s: plan names a peer: %v, Peers: %v", k.Name, got, k.Peers)
		}
	}
}
