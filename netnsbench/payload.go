package netnsbench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/vishvananda/netlink/nl"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/devbulk/devbulk"
	"github.com/devbulk/devbulk/devices"
	"github.com/devbulk/devbulk/internal/child"
	"github.com/devbulk/devbulk/namespace"
	"github.com/devbulk/devbulk/nlbatch"
)

// Payload is what each namespace gets, a list of items applied in order:
// lo-up, sysctl:KEY=VALUE, veth:N, devices:KIND:COUNT, ipvs:N, exec:CMD
// (last: the command runs to the end of the list), and router, the 2014
// regression's script (lo-up, sysctl:net.ipv4.ip_forward=1, veth:2).
type Payload struct {
	// Name is the list as given ("lo-up" when none was).
	Name  string
	items []item
	// Kinds are the device kinds the payload creates: a run checks that
	// the kernel has them before it starts.
	Kinds []*devices.Kind
	// IPVS is the number of IPVS virtual services each namespace gets.
	IPVS int
	// needsParent: some item pairs with the run's parent namespace.
	needsParent bool
	// sysctls are the sysctl items, KEY and VALUE: Probe writes each in a
	// scratch namespace before a run.
	sysctls [][2]string
	// programs are what the items' shell forms run (Programs).
	programs []string
	// keys are the items given so far, by what they make (veth, ipvs,
	// devices, lo-up, each sysctl key): an item twice would make the same
	// names or services twice.
	keys map[string]bool
}

// item is one step of a payload.
type item struct {
	name string
	// canonical is the item as it is always written ("veth:1" for veth),
	// where that differs from name.
	canonical string
	// apply runs on a locked thread inside the namespace, with the run's
	// parent namespace and the namespace's sequence number; first is set
	// in each worker's first namespace (where the payload is verified).
	apply func(parent netns.NsHandle, seq int, first bool) error
	// shell is the item as a shell command, for exec mode ("" where it
	// has none).
	shell string
}

// Limits of the payload items.
const (
	MaxPayloadDevices = 10000 // devices:KIND:COUNT
	MaxVeths          = 64    // veth:N
	MaxIPVSServices   = 10000 // ipvs:N
)

// label names the payload in reports: its list, or "none" for the zero
// Payload (create's default: namespaces given nothing).
func (p Payload) label() string {
	if p.Name == "" {
		return "none"
	}
	return p.Name
}

// ParsePayload parses a comma-separated list of payload items (see
// Payload); "" is lo-up. Unknown items and values out of range are errors
// that name them.
func ParsePayload(s string) (Payload, error) {
	p := Payload{Name: s}
	if s == "" {
		p.Name = "lo-up"
	}
	rest := p.Name
	for rest != "" {
		var word string
		if strings.HasPrefix(rest, "exec:") {
			word, rest = rest, "" // the command may hold commas
		} else {
			word, rest, _ = strings.Cut(rest, ",")
		}
		if err := p.add(word); err != nil {
			return Payload{}, err
		}
	}
	if len(p.items) == 0 {
		return Payload{}, errors.New("empty payload: give items such as lo-up,sysctl:net.ipv4.ip_forward=1,veth:2")
	}
	return p, nil
}

var sysctlKey = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^net\.[A-Za-z0-9_.-]+$`) })

// push appends an item that makes what key names, once.
func (p *Payload) push(key string, it item) error {
	if p.keys == nil {
		p.keys = map[string]bool{}
	}
	if p.keys[key] {
		return fmt.Errorf("payload item %s given twice (--veth is veth:1; router holds lo-up, sysctl:net.ipv4.ip_forward and veth:2): give it once, with its count", key)
	}
	p.keys[key] = true
	p.items = append(p.items, it)
	return nil
}

// payloadItem is one kind of payload item. The table (payloadItems) feeds
// the parser, its errors, the flag's help (PayloadHelp) and the programs a
// shell form needs (Payload.Programs): a new item is one more row.
type payloadItem struct {
	form string // as written: "veth:N"; its name is what comes before ":"
	help string // what it does, for the flag's help ("" when form says it)
	// bare: the item takes no argument (lo-up, router).
	bare bool
	// program is what its shell form runs ("" none, or the user's own:
	// exec).
	program string
	// parse adds the item written word (arg: what follows "name:").
	parse func(p *Payload, word, arg string) error
}

// payloadItems are the items, in the order the help lists them (set in
// init: router's parse adds items through the table).
var payloadItems []payloadItem

func init() {
	payloadItems = []payloadItem{
		{form: "lo-up", bare: true, program: "ip", parse: func(p *Payload, word, _ string) error {
			return p.push("lo-up", item{name: word, apply: loUp, shell: "ip link set lo up"})
		}},
		{form: "sysctl:KEY=VALUE", help: "net.*", program: "sysctl", parse: parseSysctl},
		{form: "veth:N", help: "N pairs to a parent namespace, the peers made there; veth:N:moved: both ends made inside and the peers moved out, as CNI's classic SetupVeth", parse: parseVeth},
		{form: "devices:KIND:COUNT", parse: parseDevices},
		{form: "ipvs:N", help: "N IPVS services", program: "ipvsadm", parse: func(p *Payload, word, arg string) error {
			n, err := itemCount(word, arg, MaxIPVSServices)
			if err != nil {
				return err
			}
			p.IPVS = n
			return p.push("ipvs", item{name: word, apply: func(_ netns.NsHandle, _ int, first bool) error { return addIPVSServices(n, first) },
				shell: ipvsadmLines(n)})
		}},
		{form: "exec:CMD", help: "last", parse: func(p *Payload, word, arg string) error {
			if strings.TrimSpace(arg) == "" {
				return fmt.Errorf("payload item exec: needs a command, as in exec:'ip link set lo up'")
			}
			return p.push("exec", item{name: word, apply: func(netns.NsHandle, int, bool) error { return run(arg) }, shell: arg})
		}},
		{form: "router", help: strings.Join(routerItems, ","), bare: true, parse: func(p *Payload, _, _ string) error {
			for _, w := range routerItems {
				if err := p.add(w); err != nil {
					return err
				}
			}
			return nil
		}},
	}
}

// routerItems are the 2014 regression's script.
var routerItems = []string{"lo-up", "sysctl:net.ipv4.ip_forward=1", "veth:2"}

// PayloadHelp lists the payload items for a flag's help.
func PayloadHelp() string {
	var out []string
	for _, it := range payloadItems {
		if it.help != "" {
			out = append(out, it.form+" ("+it.help+")")
		} else {
			out = append(out, it.form)
		}
	}
	return strings.Join(out, ", ")
}

// add parses one item.
func (p *Payload) add(word string) error {
	name, arg, hasArg := strings.Cut(word, ":")
	for i := range payloadItems {
		it := &payloadItems[i]
		if n, _, _ := strings.Cut(it.form, ":"); n == name && !(it.bare && hasArg) {
			if err := it.parse(p, word, arg); err != nil {
				return err
			}
			if it.program != "" && !slices.Contains(p.programs, it.program) {
				p.programs = append(p.programs, it.program)
			}
			return nil
		}
	}
	var forms []string
	for _, it := range payloadItems {
		forms = append(forms, it.form)
	}
	return fmt.Errorf("unknown payload item %q (valid: %s)", word, strings.Join(forms, ", "))
}

// itemCount reads an item's N, in 1..max.
func itemCount(word, arg string, max int) (int, error) {
	n, err := strconv.Atoi(arg)
	if err != nil || n < 1 || n > max {
		return 0, fmt.Errorf("payload item %q: N out of range: 1..%d", word, max)
	}
	return n, nil
}

func parseVeth(p *Payload, word, arg string) error {
	n, moved := 1, false // veth alone
	if strings.Contains(word, ":") {
		count, how, hasHow := strings.Cut(arg, ":")
		if hasHow && how != "moved" {
			return fmt.Errorf("payload item %q: want veth:N or veth:N:moved", word)
		}
		var err error
		if n, err = itemCount(word, count, MaxVeths); err != nil {
			return err
		}
		moved = hasHow
	}
	p.needsParent = true
	p.addKind(devices.Veth)
	canonical := fmt.Sprintf("veth:%d", n)
	if moved {
		canonical += ":moved"
	}
	return p.push("veth", item{name: word, canonical: canonical, apply: func(parent netns.NsHandle, seq int, _ bool) error { return vethsToParent(parent, seq, n, moved) }})
}

func parseSysctl(p *Payload, word, arg string) error {
	key, value, ok := strings.Cut(arg, "=")
	if !ok || !sysctlKey().MatchString(key) || strings.Contains(key, "..") || value == "" || strings.ContainsAny(value, "\n\x00") {
		return fmt.Errorf("payload item %q: want sysctl:KEY=VALUE with a net.* KEY (a namespace's own settings, as net.ipv4.ip_forward)", word)
	}
	p.sysctls = append(p.sysctls, [2]string{key, value})
	return p.push("sysctl:"+key, item{name: word, apply: func(netns.NsHandle, int, bool) error { return writeSysctl(key, value) },
		shell: fmt.Sprintf("sysctl -qw %s=%s", key, value)})
}

func parseDevices(p *Payload, word, arg string) error {
	kind, n, ok := strings.Cut(arg, ":")
	if !ok {
		return fmt.Errorf("payload item %q: want devices:KIND:COUNT", word)
	}
	k, err := devices.Lookup(kind)
	if err != nil {
		return fmt.Errorf("payload item %q: %w", word, err)
	}
	if k.NeedsLower {
		return fmt.Errorf("payload item %q: kinds with a lower device are not payloads; use %s", word, devices.NamesOf(devices.Where(func(k *devices.Kind) bool { return !k.NeedsLower })))
	}
	c, err := strconv.Atoi(n)
	if err != nil || c < 1 || c > MaxPayloadDevices {
		return fmt.Errorf("payload item %q: COUNT out of range: 1..%d", word, MaxPayloadDevices)
	}
	links, err := k.Plan(devices.Options{Count: c, Prefix: "p"})
	if err != nil {
		return fmt.Errorf("payload item %q: %w", word, err)
	}
	p.addKind(k)
	return p.push("devices", item{name: word, apply: func(netns.NsHandle, int, bool) error { return create(links) }})
}

func (p *Payload) addKind(k *devices.Kind) {
	if !slices.Contains(p.Kinds, k) {
		p.Kinds = append(p.Kinds, k)
	}
}

// WithVeth is a payload list with veth:1 first (netns create --veth,
// a suite's "veth": true): before, not after, an exec item, which takes the
// rest of the list.
func WithVeth(spec string) string {
	if spec == "" {
		return "veth:1"
	}
	return "veth:1," + spec
}

// apply applies every item in order.
func (p Payload) apply(parent netns.NsHandle, seq int, first bool) error {
	for _, it := range p.items {
		if err := it.apply(parent, seq, first); err != nil {
			return fmt.Errorf("payload %s: %w", it.name, err)
		}
	}
	return nil
}

// same reports whether p and q make the same items, in whatever order (a
// bare veth is veth:1).
func (p Payload) same(q Payload) bool {
	items := func(p Payload) []string {
		out := make([]string, len(p.items))
		for i, it := range p.items {
			out[i] = cmp.Or(it.canonical, it.name)
		}
		slices.Sort(out)
		return out
	}
	return slices.Equal(items(p), items(q))
}

// Programs are the programs the payload's shell form runs, but an exec
// item's own command.
func (p Payload) Programs() []string { return slices.Clone(p.programs) }

// Shell is the payload as one shell command (`unshare -n sh -c SHELL` is
// its classic form), or an error naming an item that has none.
func (p Payload) Shell() (string, error) {
	var cmds []string
	for _, it := range p.items {
		if it.shell == "" {
			return "", fmt.Errorf("payload item %s has no shell form (exec mode runs lo-up, sysctl, ipvs and exec items)", it.name)
		}
		cmds = append(cmds, it.shell)
	}
	return strings.Join(cmds, "; "), nil
}

// loUp sets the namespace's loopback up, as `ip link set lo up` does.
func loUp(netns.NsHandle, int, bool) error {
	c, err := nlbatch.DialHere(nlbatch.Options{RcvBuf: 64 << 10})
	if err != nil {
		return err
	}
	defer c.Close()
	req := nl.NewNetlinkRequest(unix.RTM_NEWLINK, 0)
	msg := nl.NewIfInfomsg(unix.AF_UNSPEC)
	msg.Index, msg.Flags, msg.Change = 1, unix.IFF_UP, unix.IFF_UP // lo is ifindex 1 in every namespace
	req.AddData(msg)
	return c.Do(context.Background(), req.Serialize())
}

// writeSysctl writes a net.* setting of the calling thread's namespace:
// /proc/sys/net answers for the namespace of the thread that opens it.
func writeSysctl(key, value string) error {
	path := filepath.Join("/proc/sys", strings.ReplaceAll(key, ".", "/"))
	f, err := os.OpenFile(path, os.O_WRONLY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(value)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func create(links []devices.Link) error {
	c, err := nlbatch.DialHere(nlbatch.Options{})
	if err != nil {
		return err
	}
	defer c.Close()
	reqs := make([][]byte, len(links))
	for i := range links {
		reqs[i] = links[i].Message()
	}
	res, _, err := c.Execute(context.Background(), reqs, 0)
	if err != nil {
		return err
	}
	for _, r := range res {
		if r.Err != nil {
			return r.Err
		}
	}
	return nil
}

// vethsToParent creates n veth pairs inside the namespace (eth0..) whose
// peers live in the run's parent namespace, as container runtimes do:
// created there directly (CNI since 2021), or, moved, created here and then
// moved out (CNI's classic SetupVeth), which costs the kernel two
// synchronize_net and an rcu_barrier per moved end.
func vethsToParent(parent netns.NsHandle, seq, n int, moved bool) error {
	c, err := nlbatch.DialHere(nlbatch.Options{RcvBuf: 64 << 10})
	if err != nil {
		return err
	}
	defer c.Close()
	ctx := context.Background()
	for i := range n {
		l := devices.Link{Kind: devices.Veth, Name: fmt.Sprintf("eth%d", i), Peer: vethPeer(seq, i), PeerNetns: int(parent)}
		if moved {
			l.PeerNetns = 0
		}
		if err := c.Do(ctx, l.Message()); err != nil {
			return err
		}
		if !moved {
			continue
		}
		peer, err := c.LinkByName(l.Peer)
		if err != nil {
			return err
		}
		if err := c.Do(ctx, nlbatch.SetNetnsRequest(peer.Index, int(parent))); err != nil {
			return fmt.Errorf("moving %s out: %w", l.Peer, err)
		}
	}
	return nil
}

// vethPeer names the parent's end of a namespace's i-th pair: v SEQ,
// then _I past the first (at most 15 bytes for a million namespaces).
func vethPeer(seq, i int) string {
	if i == 0 {
		return fmt.Sprintf("v%d", seq)
	}
	return fmt.Sprintf("v%d_%d", seq, i)
}

// run runs a shell command, which inherits the locked thread's namespace
// and dies with devbulk (a terminal's Ctrl-C reaches its process group).
func run(cmd string) error {
	out, err := child.Command(context.Background(), "/bin/sh", "-c", cmd).CombinedOutput()
	if err != nil {
		return fmt.Errorf("exec %q: %v: %s", cmd, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// ErrBadPayload reports a payload item this kernel refuses (a usage error:
// the run would fail in its first namespace).
var ErrBadPayload = errors.New("bad payload")

// Probe writes the payload's sysctls in a scratch namespace, so that a key
// this kernel does not have in a namespace, or a value it refuses, stops a
// run before it starts, not after it. Keys that exist only once the run's
// own devices or modules do (a device's conf or neigh settings, IPVS's) are
// left to the run's first namespace.
func (p Payload) Probe() error {
	if len(p.sysctls) == 0 {
		return nil
	}
	ns, err := namespace.Unshare()
	if err != nil {
		return err
	}
	defer ns.Close()
	return namespace.Run(ns, func() error {
		for _, kv := range p.sysctls {
			if !probeable(kv[0]) {
				continue
			}
			err := writeSysctl(kv[0], kv[1])
			switch {
			case errors.Is(err, os.ErrNotExist):
				return devbulk.Mark(ErrBadPayload, "payload item sysctl:%s=%s: this kernel has no %s in a network namespace", kv[0], kv[1], kv[0])
			case err != nil:
				return devbulk.Mark(ErrBadPayload, "payload item sysctl:%s=%s: the kernel refuses the value %q: %w", kv[0], kv[1], kv[1], err)
			}
		}
		return nil
	})
}

// probeable reports whether a sysctl key exists in a namespace holding only
// lo: not net.ipv4.conf.eth0.* (a payload's veth is named eth0), nor
// net.ipv4.vs.* (ip_vs may be a module the run loads).
func probeable(key string) bool {
	f := strings.Split(key, ".")
	switch {
	case len(f) > 3 && (f[2] == "conf" || f[2] == "neigh"):
		return f[3] == "all" || f[3] == "default" || f[3] == "lo"
	case len(f) > 2 && f[2] == "vs":
		return false
	}
	return true
}
