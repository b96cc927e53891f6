package devices

import (
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"strings"

	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"

	"github.com/devbulk/devbulk/nlbatch"
)

// Kind is the factory of one link kind.
type Kind struct {
	// Name is the IFLA_INFO_KIND and the name on the command line.
	Name string
	// Module is the kernel module that provides the kind.
	Module string
	// Config is the Kconfig symbol that builds it.
	Config string
	// ModuleParams are given when devbulk loads the module: for dummy and
	// ifb they keep it from creating devices of its own (dummy0, ifb0). The
	// tunnel modules have no such parameter: see Fallback.
	ModuleParams string
	// NeedsLower reports that each link sits on a lower device (IFLA_LINK).
	NeedsLower bool
	// PerLower caps the links one lower device can carry (vlan: 4094 ids);
	// 0 means no cap.
	PerLower int
	// Fallback names the devices the module creates by itself in every
	// namespace (tunl0, gre0, ...). They are never devbulk's.
	Fallback []string
	// MaxCount caps the links of one run (tunnels: the remote address range).
	MaxCount int
	// Remotes reports tunnels told apart by their remote address
	// (Options.RemoteBase); VlanProtos, links that take a vlan protocol
	// (Options.VlanProto).
	Remotes, VlanProtos bool
	// Peers reports links that come in pairs (veth): each link's peer,
	// its IFLA_LINK, is made and deleted with it.
	Peers bool
	// NetnsLocal reports links the kernel will not move to another
	// namespace (NETIF_F_NETNS_LOCAL: "The interface netns is immutable",
	// EINVAL).
	NetnsLocal bool
	// WaitsPerDevice reports links whose unregister waits for a grace
	// period each even in one batch (bridge: 17.7 ms a device by group on
	// 6.18, as one by one), for the estimate of a run's time.
	WaitsPerDevice bool
	// KernelKiB is the kernel memory one link holds, in KiB (slab, per-CPU
	// and vmalloc): the largest of 5 cycles of 2000 (README, "What a device
	// costs the kernel in memory"; 6.18 on the host, 6.1 in the VM), for
	// the estimate before a run (Fits).
	KernelKiB float64
	// LowerChoice ranks the kinds devbulk makes as lower devices, and as
	// the default kind of a bench (1: the first choice); 0: never. They
	// have nothing of their own to configure, and a module parameter that
	// keeps the module from making devices of its own.
	LowerChoice int

	// check validates the kind's own options.
	check func(o Options) error
	// pick chooses identifiers of the run's (a vxlan's VNIs) that no link
	// of the namespace uses, into o, unless o gives them.
	pick func(existing []nlbatch.Link, o *Options) error
	// assign fills the kind's own fields of the i-th link of a run.
	assign func(l *Link, i int, o Options)
	// data adds the kind's IFLA_INFO_DATA, if it has one.
	data func(l *Link, info *nl.RtAttr)
	// ipArgs is the kind's part of an `ip link add` line, after "type".
	ipArgs func(l *Link) string
}

// Pick chooses what the run's links must not share with the namespace's
// (existing) into o, unless o gives it: a vxlan run's VNIs, from those in
// use. Kinds with nothing of the sort have nothing to pick.
func (k *Kind) Pick(existing []nlbatch.Link, o *Options) error {
	if k.pick == nil {
		return nil
	}
	return k.pick(existing, o)
}

// MaxCount is the most links one run creates, whatever the kind; whether
// they fit in the machine's memory is Fits's to say.
const MaxCount = 1000000

var registry = map[string]*Kind{}

func register(k *Kind) *Kind {
	if k.MaxCount == 0 {
		k.MaxCount = MaxCount
	}
	registry[k.Name] = k
	return k
}

// Lookup returns the factory of a kind, named in any case (IFB is ifb),
// or an error that lists the valid ones.
func Lookup(name string) (*Kind, error) {
	if k, ok := registry[strings.ToLower(name)]; ok {
		return k, nil
	}
	return nil, fmt.Errorf("unknown kind %q (valid: %s)", name, strings.Join(Names(), ", "))
}

// Paired reports whether links of the kind named so come in pairs (veth),
// whose IFLA_LINK names the other end.
func Paired(name string) bool {
	k, err := Lookup(name)
	return err == nil && k.Peers
}

// Where is every kind keep says yes to, sorted by name.
func Where(keep func(*Kind) bool) []*Kind {
	var out []*Kind
	for _, k := range All() {
		if keep(k) {
			out = append(out, k)
		}
	}
	return out
}

// NamesOf joins the kinds' names for a message: "dummy, ifb".
func NamesOf(ks []*Kind) string {
	names := make([]string, len(ks))
	for i, k := range ks {
		names[i] = k.Name
	}
	return strings.Join(names, ", ")
}

// All returns every kind, sorted by name.
func All() []*Kind {
	ks := make([]*Kind, 0, len(registry))
	for _, k := range registry {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(i, j int) bool { return ks[i].Name < ks[j].Name })
	return ks
}

// Names returns the names of every kind, sorted.
func Names() []string {
	var names []string
	for _, k := range All() {
		names = append(names, k.Name)
	}
	return names
}

// Link is one link to create.
type Link struct {
	Kind  *Kind
	Name  string
	Group uint32
	Up    bool
	// Lower and LowerName identify the lower device (vlan, macvlan).
	Lower     int32
	LowerName string

	VlanID    uint16
	VlanProto uint16     // unix.ETH_P_8021Q or unix.ETH_P_8021AD
	Remote    netip.Addr // ipip, gre, gretap
	VNI       uint32     // vxlan
	Peer      string     // veth
	// PeerNetns, when set, is a namespace fd the veth peer is created in
	// (IFLA_NET_NS_FD): a container's eth0 paired with the host side.
	// IPCommand leaves it out (an fd means nothing to another process).
	PeerNetns int
}

// Message returns the RTM_NEWLINK request that creates l, laid out as
// vishvananda/netlink's LinkAdd lays it out.
func (l *Link) Message() []byte {
	req := nl.NewNetlinkRequest(unix.RTM_NEWLINK, unix.NLM_F_CREATE|unix.NLM_F_EXCL|unix.NLM_F_ACK)
	msg := nl.NewIfInfomsg(unix.AF_UNSPEC)
	if l.Up {
		msg.Change = unix.IFF_UP
		msg.Flags = unix.IFF_UP
	}
	req.AddData(msg)
	if l.Lower != 0 {
		req.AddData(nl.NewRtAttr(unix.IFLA_LINK, nl.Uint32Attr(uint32(l.Lower))))
	}
	req.AddData(nl.NewRtAttr(unix.IFLA_IFNAME, nl.ZeroTerminated(l.Name)))
	if l.Group != 0 {
		req.AddData(nl.NewRtAttr(unix.IFLA_GROUP, nl.Uint32Attr(l.Group)))
	}
	info := nl.NewRtAttr(unix.IFLA_LINKINFO, nil)
	info.AddRtAttr(nl.IFLA_INFO_KIND, nl.NonZeroTerminated(l.Kind.Name))
	if l.Kind.data != nil {
		l.Kind.data(l, info)
	}
	req.AddData(info)
	return req.Serialize()
}

// IPCommand returns the `ip -batch` line that creates the same link with
// iproute2, for side-by-side comparisons.
func (l *Link) IPCommand() string {
	var b strings.Builder
	b.WriteString("link add ")
	if l.LowerName != "" {
		fmt.Fprintf(&b, "link %s ", l.LowerName)
	}
	fmt.Fprintf(&b, "name %s", l.Name)
	if l.Group != 0 {
		fmt.Fprintf(&b, " group %d", l.Group)
	}
	if l.Up {
		b.WriteString(" up")
	}
	b.WriteString(" type " + l.Kind.Name)
	if l.Kind.ipArgs != nil {
		b.WriteString(" " + l.Kind.ipArgs(l))
	}
	return b.String()
}

// moduleExtraKinds are link kinds a module provides that devbulk does not
// create but must recognize (a module unload removes them too).
var moduleExtraKinds = map[string][]string{"ip_gre": {"erspan"}}

// KindsOfModule returns every IFLA_INFO_KIND the module provides.
func KindsOfModule(module string) []string {
	kinds := append([]string(nil), moduleExtraKinds[module]...)
	for _, k := range All() {
		if k.Module == module {
			kinds = append(kinds, k.Name)
		}
	}
	return kinds
}

// IsFallback reports whether name is a device that module creates by itself
// in every namespace (tunl0 for ipip, gre0 for ip_gre, ...).
func IsFallback(module, name string) bool {
	for _, k := range registry {
		if k.Module == module && slices.Contains(k.Fallback, name) {
			return true
		}
	}
	return false
}
