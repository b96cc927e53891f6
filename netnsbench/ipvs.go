package netnsbench

import (
	"fmt"
	"io"
	"net/netip"
	"strings"

	"github.com/cloudflare/ipvs"
	"github.com/cloudflare/ipvs/netmask"

	"github.com/devbulk/devbulk"
	"github.com/devbulk/devbulk/devices"
	"github.com/devbulk/devbulk/kmod"
)

// IPVSModules are what an ipvs:N payload needs loaded: IPVS itself and the
// round-robin scheduler its services use.
var IPVSModules = []string{"ip_vs", "ip_vs_rr"}

// GuestModules are the modules devbulk's VM carries: every device kind's,
// and IPVS's for ipvs payloads.
func GuestModules() []string {
	var out []string
	for _, k := range devices.All() {
		out = append(out, k.Module)
	}
	return append(out, IPVSModules...)
}

// ipvsService is the k-th (0-based) virtual service of an ipvs:N payload:
// TCP, port 80, scheduler rr, at 198.18.0.0/15 (the benchmarking range,
// as every address devbulk makes up) from 198.18.0.1 on. Every namespace
// gets the same ones: services are per namespace.
func ipvsService(k int) ipvs.Service {
	a := netip.AddrFrom4([4]byte{198, 18 + byte((k+1)>>16), byte((k + 1) >> 8), byte(k + 1)})
	return ipvs.Service{Address: a, Netmask: netmask.MaskFrom(32, 32), Port: 80, Family: ipvs.INET, Protocol: ipvs.TCP, Scheduler: "rr"}
}

// ipvsadmLines is ipvs:N in the classic shell form: one `ipvsadm -A` each.
func ipvsadmLines(n int) string {
	lines := make([]string, n)
	for k := range n {
		lines[k] = fmt.Sprintf("ipvsadm -A -t %s:80 -s rr", ipvsService(k).Address)
	}
	return strings.Join(lines, "; ")
}

// addIPVSServices adds n virtual services to the calling thread's
// namespace over generic netlink (IPVS_CMD_NEW_SERVICE), as ipvsadm -A
// does; with verify, it dumps the services and checks that there are n.
func addIPVSServices(n int, verify bool) error {
	c, err := ipvs.New()
	if err != nil {
		return fmt.Errorf("IPVS over generic netlink: %w", err)
	}
	defer closeIPVS(c)
	for k := range n {
		if err := c.CreateService(ipvsService(k)); err != nil {
			return fmt.Errorf("adding IPVS service %s:80: %w", ipvsService(k).Address, err)
		}
	}
	if !verify {
		return nil
	}
	svcs, err := c.Services()
	if err != nil {
		return fmt.Errorf("listing IPVS services: %w", err)
	}
	// The dump walks a table all namespaces share, in chunks: services
	// added meanwhile by other workers can make it list one twice. Each is
	// counted once.
	have := map[netip.AddrPort]bool{}
	for _, svc := range svcs {
		have[netip.AddrPortFrom(svc.Address, svc.Port)] = true
	}
	for k := range n {
		if want := ipvsService(k); !have[netip.AddrPortFrom(want.Address, want.Port)] {
			return fmt.Errorf("IPVS service %s:80 missing after adding %d", want.Address, n)
		}
	}
	if len(have) != n {
		return fmt.Errorf("the namespace holds %d IPVS services after adding %d", len(have), n)
	}
	return nil
}

// Prepare readies this kernel for the payload before a run starts: the
// device kinds it makes must be there (probed, their modules loaded as
// creating one would), and IPVS for ipvs:N items (see PrepareIPVS). The
// returned release unloads what Prepare loaded; call it after the run.
func (p Payload) Prepare() (release func(), err error) {
	release = func() {}
	if err := p.Probe(); err != nil {
		return release, err
	}
	if len(p.Kinds) > 0 {
		sup, err := devices.Probe(p.Kinds...)
		if err != nil {
			return release, fmt.Errorf("probing kinds: %w", err)
		}
		if err := devices.Require(sup, p.Kinds...); err != nil {
			return release, fmt.Errorf("payload %s: %w", p.Name, err)
		}
	}
	if p.IPVS > 0 {
		return PrepareIPVS()
	}
	return release, nil
}

// PrepareAll prepares each payload given (nil ones are skipped), as
// Prepare; release undoes them all, after the run, even when an error is
// returned.
func PrepareAll(ps ...*Payload) (release func(), err error) {
	var undo []func()
	release = func() {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i]()
		}
	}
	for _, p := range ps {
		if p == nil {
			continue
		}
		u, err := p.Prepare()
		undo = append(undo, u)
		if err != nil {
			return release, err
		}
	}
	return release, nil
}

// PrepareIPVS makes IPVS usable here: it loads ip_vs and its rr scheduler
// where they are modules not yet loaded (as modprobe would), then asks the
// kernel for the IPVS generic netlink family. Where there is none, the
// error matches devbulk.ErrNotSupported. release unloads the modules
// PrepareIPVS loaded (not those that were loaded before), so that a run
// leaves the host's modules as they were; a module someone started using
// meanwhile stays.
func PrepareIPVS() (release func(), err error) {
	var loaded []string
	release = func() {
		for i := len(loaded) - 1; i >= 0; i-- {
			_ = kmod.Unload(loaded[i])
		}
	}
	if ix, err := kmod.Open(kmod.Dir()); err == nil {
		for _, m := range IPVSModules {
			was, err := kmod.Loaded(m)
			if err != nil {
				return release, err
			}
			if !was && ix.Load(m, "") == nil {
				if now, _ := kmod.Loaded(m); now {
					loaded = append(loaded, m)
				}
			}
		}
	}
	c, err := ipvs.New()
	if err != nil {
		return release, devbulk.NotSupported("payload ipvs: this kernel has no IPVS (CONFIG_IP_VS, module ip_vs): %w", err)
	}
	closeIPVS(c)
	return release, nil
}

// closeIPVS closes a client's socket (the Client interface does not say
// it is a Closer; the Linux client is).
func closeIPVS(c ipvs.Client) {
	if cl, ok := c.(io.Closer); ok {
		_ = cl.Close()
	}
}
