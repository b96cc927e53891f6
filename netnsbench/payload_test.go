package netnsbench

import (
	"strings"
	"testing"
)

func TestParsePayload(t *testing.T) {
	for _, tc := range []struct {
		spec, items, shell string
		ipvs               int
		parent             bool
	}{
		{"", "lo-up", "ip link set lo up", 0, false},
		{"lo-up,sysctl:net.ipv4.ip_forward=1,veth:2", "lo-up sysctl:net.ipv4.ip_forward=1 veth:2", "", 0, true},
		{"router", "lo-up sysctl:net.ipv4.ip_forward=1 veth:2", "", 0, true},
		{"veth", "veth", "", 0, true},
		{"lo-up,veth:2:moved", "lo-up veth:2:moved", "", 0, true},
		{"ipvs:3", "ipvs:3", "ipvsadm -A -t 198.18.0.1:80 -s rr; ipvsadm -A -t 198.18.0.2:80 -s rr; ipvsadm -A -t 198.18.0.3:80 -s rr", 3, false},
		{"lo-up,sysctl:net.core.somaxconn=512", "lo-up sysctl:net.core.somaxconn=512", "ip link set lo up; sysctl -qw net.core.somaxconn=512", 0, false},
		{"devices:ifb:3,exec:echo a,b; true", "devices:ifb:3 exec:echo a,b; true", "", 0, false},
		{"lo-up,exec:ip -o link | grep -c lo", "lo-up exec:ip -o link | grep -c lo", "ip link set lo up; ip -o link | grep -c lo", 0, false},
		{"sysctl:net.a=1,sysctl:net.b=2", "sysctl:net.a=1 sysctl:net.b=2", "sysctl -qw net.a=1; sysctl -qw net.b=2", 0, false},
		{WithVeth("lo-up,exec:true"), "veth:1 lo-up exec:true", "", 0, true},
	} {
		p, err := ParsePayload(tc.spec)
		if err != nil {
			t.Errorf("%q: %v", tc.spec, err)
			continue
		}
		var names []string
		for _, it := range p.items {
			names = append(names, it.name)
		}
		shell, _ := p.Shell()
		if strings.Join(names, " ") != tc.items || shell != tc.shell || p.IPVS != tc.ipvs || p.needsParent != tc.parent {
			t.Errorf("%q: items %q, shell %q, ipvs %d, parent %v", tc.spec, names, shell, p.IPVS, p.needsParent)
		}
	}
	for bad, want := range map[string]string{
		"lo":                             `unknown payload item "lo"`,
		"lo-up,,veth":                    `unknown payload item ""`,
		"exec:":                          "needs a command",
		"exec:  ":                        "needs a command",
		"devices:ifb":                    "want devices:KIND:COUNT",
		"devices:ifb:0":                  "COUNT out of range: 1..10000",
		"devices:ifb:10001":              "COUNT out of range: 1..10000",
		"devices:vlan:3":                 "not payloads",
		"devices:nosuch:3":               "nosuch",
		"devices:ifb:3:4":                "COUNT out of range",
		"veth:0":                         "N out of range: 1..64",
		"veth:65":                        "N out of range: 1..64",
		"veth:2:copied":                  "want veth:N or veth:N:moved",
		"veth:moved":                     "N out of range: 1..64",
		"veth:0:moved":                   "N out of range: 1..64",
		"veth:1,veth:1:moved":            "payload item veth given twice",
		"ipvs:0":                         "N out of range: 1..10000",
		"ipvs:x":                         "N out of range",
		"sysctl:kernel.panic=1":          "net.* KEY",
		"sysctl:net.ipv4.ip_forward":     "want sysctl:KEY=VALUE",
		"sysctl:net.ipv4.ip_forward=":    "want sysctl:KEY=VALUE",
		"sysctl:net.ipv4/../../x=1":      "net.* KEY",
		"sysctl:net..ipv4.ip_forward=1":  "net.* KEY",
		"sysctl:net.ipv4.ip_forward=1\n": "want sysctl:KEY=VALUE",
		"ipvs:2,ipvs:3":                  "payload item ipvs given twice",
		"router,veth":                    "payload item veth given twice",
		"veth:1,router":                  "payload item veth given twice",
		"devices:ifb:2,devices:ifb:3":    "payload item devices given twice",
		"sysctl:net.a=1,sysctl:net.a=2":  "payload item sysctl:net.a given twice",
	} {
		if _, err := ParsePayload(bad); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error with %q", bad, err, want)
		}
	}
	if _, err := (Payload{items: []item{{name: "veth:1"}}}).Shell(); err == nil || !strings.Contains(err.Error(), "veth:1 has no shell form") {
		t.Errorf("veth's shell form: %v", err)
	}
}

// What ParsePayload accepts names itself, is made of known items with
// values in range, and a sysctl never leaves /proc/sys/net.
func FuzzParsePayload(f *testing.F) {
	for _, s := range []string{"lo-up", "veth", "exec:true", "devices:ifb:3", "devices:vlan:1", "router,ipvs:2", "sysctl:net.a=b,veth:3", "sysctl:net.0=/"} {
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
		for _, it := range p.items {
			name, arg, _ := strings.Cut(it.name, ":")
			key, _, _ := strings.Cut(arg, "=") // the value is written, not a path
			if name == "sysctl" && (!strings.HasPrefix(key, "net.") || strings.Contains(key, "..") || strings.Contains(key, "/")) {
				t.Fatalf("%q: sysctl item %q", s, it.name)
			}
		}
		for _, k := range p.Kinds {
			if k.NeedsLower {
				t.Fatalf("%q accepted a kind with a lower device: %s", s, k.Name)
			}
		}
		if p.IPVS < 0 || p.IPVS > MaxIPVSServices*len(p.items) {
			t.Fatalf("%q: %d IPVS services", s, p.IPVS)
		}
	})
}

// Keys of the run's own devices or modules are not probed in a scratch
// namespace that has neither.
func TestProbeable(t *testing.T) {
	for key, want := range map[string]bool{
		"net.ipv4.ip_forward":                true,
		"net.ipv4.conf.all.forwarding":       true,
		"net.ipv6.conf.default.disable_ipv6": true,
		"net.ipv4.conf.lo.rp_filter":         true,
		"net.ipv4.conf.eth0.forwarding":      false,
		"net.ipv4.neigh.p0.gc_stale_time":    false,
		"net.ipv4.vs.conntrack":              false,
		"net.ipv4.nosuch":                    true,
	} {
		if got := probeable(key); got != want {
			t.Errorf("probeable(%s) = %v, want %v", key, got, want)
		}
	}
}

// The programs a shell form runs come from the items' table, each once;
// an exec item's command is the user's own.
func TestPayloadPrograms(t *testing.T) {
	p, err := ParsePayload("router,ipvs:2,exec:frob now")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(p.Programs(), " "); got != "ip sysctl ipvsadm" {
		t.Errorf("programs %q, want ip sysctl ipvsadm", got)
	}
}

// A bare item refuses an argument as an unknown item.
func TestBareItemsTakeNoArgument(t *testing.T) {
	if _, err := ParsePayload("lo-up:1"); err == nil || !strings.Contains(err.Error(), "unknown payload item") {
		t.Errorf("lo-up:1: %v, want unknown payload item", err)
	}
}

// Payloads are the same whatever the order of their items, and a bare veth
// is veth:1; the moved form is another payload.
func TestSamePayload(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"veth", "veth:1", true},
		{"lo-up,veth:1", "veth:1,lo-up", true},
		{"router", "veth:2,sysctl:net.ipv4.ip_forward=1,lo-up", true},
		{"veth:1", "veth:1:moved", false},
		{"veth:1", "veth:2", false},
		{"lo-up", "lo-up,veth:1", false},
	} {
		a, errA := ParsePayload(tc.a)
		b, errB := ParsePayload(tc.b)
		if errA != nil || errB != nil {
			t.Fatal(errA, errB)
		}
		if a.same(b) != tc.same || b.same(a) != tc.same {
			t.Errorf("%s and %s: same %v, want %v", tc.a, tc.b, a.same(b), tc.same)
		}
	}
}

// A churn or a create makes the parent namespace when either payload pairs
// with one.
func TestNeedsParent(t *testing.T) {
	lo, _ := ParsePayload("lo-up")
	moved, _ := ParsePayload("veth:1:moved")
	for _, tc := range []struct {
		p, compare *Payload
		want       bool
	}{
		{&lo, nil, false},
		{&moved, nil, true},
		{&lo, &moved, true},
		{&moved, &lo, true},
	} {
		if got := needsParent(*tc.p, tc.compare); got != tc.want {
			t.Errorf("%s against %v: needs a parent %v, want %v", tc.p.Name, tc.compare, got, tc.want)
		}
	}
}
