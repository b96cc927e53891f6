package faults

import "testing"

func TestDisagreement(t *testing.T) {
	for _, c := range []struct {
		links, entries []string
		want           string
	}{
		{[]string{"lo", "dbf0"}, []string{"dbf0", "lo"}, ""},
		{[]string{"lo"}, []string{"lo", "bonding_masters"}, ""},
		// A move whose device_rename failed: the device has no entry in
		// its new namespace, and once deleted its entry stays.
		{[]string{"lo", "dbf0"}, []string{"lo"}, "link dbf0 has no /sys/class/net entry"},
		{[]string{"lo"}, []string{"dbf0", "lo"}, "/sys/class/net/dbf0 is no link's (a stale entry: no device named dbf0 can be made there)"},
	} {
		if got := disagreement(c.links, c.entries); got != c.want {
			t.Errorf("disagreement(%q, %q) = %q, want %q", c.links, c.entries, got, c.want)
		}
	}
}
