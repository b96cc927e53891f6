package devices

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The goldens are the exact requests vishvananda/netlink's LinkAdd sends for
// the same links (regenerate with internal/linkaddgolden/gen.sh).
func TestMessageMatchesLinkAdd(t *testing.T) {
	const group = 0x0db00001
	lower := []Lower{{Index: 7, Name: "lower0"}}
	cases := []struct {
		golden string
		kind   *Kind
		opts   Options
		index  int
	}{
		{"dummy", Dummy, Options{}, 0},
		{"dummy_up", Dummy, Options{Up: true}, 1},
		{"ifb", Ifb, Options{}, 0},
		{"bridge", Bridge, Options{}, 0},
		{"vlan", Vlan, Options{Lowers: lower}, 99},
		{"vlan_8021ad", Vlan, Options{Lowers: lower, VlanProto: "802.1ad"}, 4093},
		{"macvlan", Macvlan, Options{Lowers: lower}, 0},
		{"veth", Veth, Options{}, 0},
		{"ipip", Ipip, Options{}, 0},
		{"gre", Gre, Options{}, 0},
		{"gretap", Gretap, Options{}, 0},
		{"vxlan", Vxlan, Options{}, 0},
	}
	seen := map[string]bool{}
	for _, c := range cases {
		t.Run(c.golden, func(t *testing.T) {
			seen[c.kind.Name] = true
			want := readGolden(t, c.golden)
			o := c.opts
			o.Count, o.Prefix, o.Group = c.index+1, "dbk", group
			links, err := c.kind.Plan(o)
			if err != nil {
				t.Fatal(err)
			}
			l := links[c.index]
			// The goldens name the link dbk0 (dbk1 for dummy_up), whatever its index.
			if c.golden != "dummy_up" {
				l.Name = "dbk0"
				if l.Peer != "" {
					l.Peer = "dbk0p"
				}
			}
			got := l.Message()
			binary.NativeEndian.PutUint32(got[8:12], 1) // the goldens were the first request of their process
			if !bytes.Equal(got, want) {
				t.Errorf("%s request differs from LinkAdd's\n got %x\nwant %x", c.golden, got, want)
			}
		})
	}
	for _, k := range All() {
		if !seen[k.Name] {
			t.Errorf("kind %s has no golden", k.Name)
		}
	}
}

func readGolden(t *testing.T, name string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "linkadd", name+".hex"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := hex.DecodeString(strings.TrimSpace(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
