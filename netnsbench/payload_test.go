package netnsbench

import (
	"strconv"
	"strings"
	"testing"
)

func TestParsePayload(t *testing.T) {
	for _, good := range []string{"", "lo-up", "veth", "exec:ip link set lo up", "devices:ifb:3", "devices:dummy:10000"} {
		if _, err := ParsePayload(good); err != nil {
			t.Errorf("%q: %v", good, err)
		}
	}
	for _, bad := range []string{"lo", "exec:", "exec:  ", "devices:ifb", "devices:ifb:0", "devices:ifb:10001", "devices:vlan:3", "devices:nosuch:3", "devices:ifb:3:4"} {
		if _, err := ParsePayload(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// What ParsePayload accepts names itself, and a devices payload names its
// kind with a count in range.
func FuzzParsePayload(f *testing.F) {
	for _, s := range []string{"lo-up", "veth", "exec:true", "devices:ifb:3", "devices:vlan:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePayload(s)
		if err != nil {
			return
		}
		if p.Name != s && !(s == "" && p.Name == "lo-up") {
			t.Fatalf("%q parsed as %q", s, p.Name)
		}
		if f := strings.Split(s, ":"); f[0] == "devices" {
			n, err := strconv.Atoi(f[2])
			if p.Kind == nil || p.Kind.NeedsLower || err != nil || n < 1 || n > MaxPayloadDevices {
				t.Fatalf("%q accepted: kind %v", s, p.Kind)
			}
		} else if p.Kind != nil {
			t.Fatalf("%q has a kind", s)
		}
	})
}
