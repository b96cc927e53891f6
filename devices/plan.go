package devices

import (
	"fmt"
	"net/netip"
	"strconv"

	"golang.org/x/sys/unix"
)

// Options describe the links of one run.
type Options struct {
	Count  int
	Prefix string // names are Prefix0 .. Prefix(Count-1)
	Group  uint32 // IFLA_GROUP tag set at creation (0: none)
	Up     bool   // create the links administratively up
	// VlanProto is "802.1Q" (default) or "802.1ad".
	VlanProto string
	// RemoteBase is the first tunnel remote; link i gets RemoteBase+i.
	// Default 198.18.0.1 (198.18.0.0/15 is reserved for benchmarking;
	// devbulk never sends traffic to it).
	RemoteBase netip.Addr
	// VNIBase is the first vxlan VNI; link i gets VNIBase+i (default 1).
	VNIBase uint32
	// Lowers are the lower devices for kinds that need them, in order:
	// link i sits on Lowers[i/PerLower].
	Lowers []Lower
}

// Lower is a lower device a link sits on.
type Lower struct {
	Index int32
	Name  string
}

// DefaultRemoteBase is the first remote address of tunnels.
var DefaultRemoteBase = netip.MustParseAddr("198.18.0.1")

// benchRange is 198.18.0.0/15 (RFC 2544): tunnel remotes stay inside it.
var benchRange = netip.MustParsePrefix("198.18.0.0/15")

// maxNameLen is IFNAMSIZ-1.
const maxNameLen = unix.IFNAMSIZ - 1

// LowersNeeded is how many lower devices count links of kind k need.
func (k *Kind) LowersNeeded(count int) int {
	switch {
	case !k.NeedsLower:
		return 0
	case k.PerLower == 0:
		return 1
	default:
		return (count + k.PerLower - 1) / k.PerLower
	}
}

// Name returns the name of the i-th link of a run.
func Name(prefix string, i int) string { return prefix + strconv.Itoa(i) }

// ValidPrefix checks a name prefix: not empty, shorter than an interface
// name, and only characters interface names may hold.
func ValidPrefix(prefix string) error {
	if prefix == "" {
		return fmt.Errorf("empty name prefix")
	}
	if len(prefix) >= maxNameLen {
		return fmt.Errorf("name prefix %q is %d bytes: interface names take at most %d, with the number", prefix, len(prefix), maxNameLen)
	}
	for _, c := range prefix {
		if c == '/' || c == ':' || c == '%' || c <= ' ' || c > '~' {
			return fmt.Errorf("name prefix %q: character %q not allowed in interface names", prefix, c)
		}
	}
	return nil
}

// Validate checks o for kind k without touching the kernel. Its errors name
// the problem and the valid range.
func (k *Kind) Validate(o Options) error {
	if o.Count <= 0 || o.Count > k.MaxCount {
		return fmt.Errorf("count %d out of range: %s takes 1..%d", o.Count, k.Name, k.MaxCount)
	}
	if err := ValidPrefix(o.Prefix); err != nil {
		return err
	}
	longest := Name(o.Prefix, o.Count-1)
	if k.Name == "veth" {
		longest += "p"
	}
	if len(longest) > maxNameLen {
		return fmt.Errorf("name %q is %d bytes: interface names take at most %d (shorten --prefix to %d bytes or fewer)",
			longest, len(longest), maxNameLen, len(o.Prefix)-(len(longest)-maxNameLen))
	}
	if _, err := vlanProto(o.VlanProto); err != nil {
		return err
	}
	if k.check != nil {
		return k.check(o)
	}
	return nil
}

// Plan returns the links of a run, or the reason o does not fit kind k.
func (k *Kind) Plan(o Options) ([]Link, error) {
	if err := k.Validate(o); err != nil {
		return nil, err
	}
	if need := k.LowersNeeded(o.Count); len(o.Lowers) < need {
		return nil, fmt.Errorf("%s: %d links need %d lower devices, have %d", k.Name, o.Count, need, len(o.Lowers))
	}
	links := make([]Link, o.Count)
	for i := range links {
		l := &links[i]
		*l = Link{Kind: k, Name: Name(o.Prefix, i), Group: o.Group, Up: o.Up}
		if k.NeedsLower {
			lw := o.Lowers[0]
			if k.PerLower > 0 {
				lw = o.Lowers[i/k.PerLower]
			}
			l.Lower, l.LowerName = lw.Index, lw.Name
		}
		if k.assign != nil {
			k.assign(l, i, o)
		}
	}
	return links, nil
}

func remoteBase(o Options) netip.Addr {
	if o.RemoteBase.IsValid() {
		return o.RemoteBase
	}
	return DefaultRemoteBase
}

// checkRemotes keeps every tunnel remote of a run inside 198.18.0.0/15.
func checkRemotes(o Options) error {
	base := remoteBase(o)
	if !benchRange.Contains(base) {
		return fmt.Errorf("remote base %s is outside 198.18.0.0/15, the benchmarking range tunnel remotes must stay in", base)
	}
	if last := nthRemote(o, o.Count-1); !benchRange.Contains(last) || last == netip.MustParseAddr("198.19.255.255") {
		return fmt.Errorf("%d tunnels from remote %s run past 198.19.255.254: lower the count or --remote-base", o.Count, base)
	}
	return nil
}

// nthRemote is the tunnel remote of link i: consecutive addresses, which
// spread over the kernel's 128-bucket tunnel hash (remote ^ key).
func nthRemote(o Options, i int) netip.Addr {
	a := remoteBase(o).As4()
	v := uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3])
	v += uint32(i)
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
}

// LinkNames lists the links' names, in order.
func LinkNames(links []Link) []string {
	out := make([]string, len(links))
	for i := range links {
		out[i] = links[i].Name
	}
	return out
}
