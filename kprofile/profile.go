package kprofile

import (
	"fmt"
	"os"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/devbulk/devbulk"
	"github.com/devbulk/devbulk/internal/tracefs"
)

// ErrUnavailable is what New returns where the kernel or machine cannot
// trace (it matches devbulk.ErrNotSupported).
var ErrUnavailable = devbulk.NotSupported("kernel profile unavailable")

// Entry is one function's share of a phase.
type Entry struct {
	Function string `json:"function"`
	Calls    int    `json:"calls"`
	// TotalNS is the time charged to the function: from its entries to
	// its returns, less the traced functions it called (each charged to
	// itself), so that entries add up without counting a nested wait twice.
	TotalNS int64 `json:"total_ns"`
	// InclusiveNS is its time with what it called.
	InclusiveNS int64 `json:"inclusive_ns"`
	// PerDeviceNS is TotalNS per device (or per namespace) of the phase.
	PerDeviceNS int64 `json:"per_device_ns"`
	// Share is TotalNS over the phase's wall time.
	Share float64 `json:"share"`
}

// Profile is where one phase's time went, by function, the largest first.
type Profile struct {
	Entries []Entry
	// UnattributedNS is the phase's wall time less everything traced:
	// devbulk's own work, netlink, scheduling, and the kernel's work outside
	// the traced functions. Negative when traced work ran in parallel (on
	// several CPUs at once) for longer than the wall.
	UnattributedNS int64
	// Unmatched counts returns whose entry was not traced (a call already
	// under way when tracing started): their time is not in the entries.
	Unmatched int
}

// Set is a set of functions to trace: entry points and the functions
// within them to break the time down by.
type Set struct {
	// Roots are the entry points (set_graph_function): calls outside them
	// are not traced.
	Roots []string
	// Functions are traced where the kernel has them (inlined functions
	// have no trace point): a breakdown names only what it could see.
	Functions []string
}

// Unregister is the set for delete phases: the unregister path, the work
// after RTNL is dropped (netdev_run_todo: rcu_barrier, the reference wait),
// waits for RTNL, for the netns strategy the cleanup worker, and for the
// module strategy the unload (the delete_module syscall; in it,
// rtnl_link_unregister kills the module's
// links, free_module frees it). The 6.1 and 6.3+ names of the unregister
// function are both listed.
var Unregister = Set{
	Roots: []string{"unregister_netdevice_many_notify", "unregister_netdevice_many", "netdev_run_todo", "rtnl_lock", "cleanup_net",
		"__x64_sys_delete_module", "rtnl_link_unregister", "free_module"},
	Functions: []string{
		// waits
		"synchronize_rcu", "synchronize_rcu_expedited", "synchronize_net", "rcu_barrier",
		"netdev_wait_allrefs_any", "netdev_wait_allrefs",
		// work
		"dev_close_many", "dev_deactivate_many", "dev_shutdown", "flush_all_backlogs",
		"call_netdevice_notifiers_info", "call_netdevice_notifiers", "netdev_unregister_kobject",
		"rtmsg_ifinfo_build_skb", "rtmsg_ifinfo_send", "free_netdev", "dev_uc_flush", "dev_mc_flush",
		"ops_exit_list", "default_device_exit_batch",
	},
}

// Register is the set for create phases: RTM_NEWLINK (rtnl_newlink)
// and the waits for RTNL, broken down into the link's allocation, its
// name (checks and hashing), its ifindex, register_netdevice's sysfs
// entries and uevent, the NETDEV_REGISTER notifiers (among them IPv4's
// and IPv6's per-device sysctls) and the RTM_NEWLINK notification. Tunnel
// and vlan lookups are listed too: where one grows with the number of
// links, its time per device grows with it.
var Register = Set{
	Roots: []string{"rtnl_newlink", "rtnl_lock"},
	Functions: []string{
		// waits
		"synchronize_rcu", "synchronize_net", "rcu_barrier",
		// the link and its name
		"rtnl_create_link", "alloc_netdev_mqs", "dev_get_valid_name", "dev_prep_valid_name", "netdev_name_in_use",
		"__dev_get_by_name", "dev_index_reserve", "dev_new_index", "__dev_get_by_index", "list_netdevice",
		// registration
		"register_netdevice", "netdev_register_kobject", "device_add", "kobject_uevent_env",
		"call_netdevice_notifiers_info", "inetdev_event", "addrconf_notify", "devinet_sysctl_register",
		"addrconf_sysctl_register", "neigh_sysctl_register", "__register_sysctl_table",
		"rtnl_configure_link", "rtmsg_ifinfo_build_skb", "rtmsg_ifinfo_send",
		// kinds
		"register_vlan_dev", "vlan_vid_add", "ip_tunnel_newlink", "ip_tunnel_find", "ipgre_newlink",
	},
}

// Move is the set for move phases: a link leaving its namespace alive
// (RTM_NEWLINK or RTM_SETLINK with IFLA_NET_NS_FD, one device or a group),
// whose __dev_change_net_namespace (netif_change_net_namespace in some
// versions) takes much of the unregister path — notifiers, the device
// closed, two synchronize_net and an rcu_barrier — then lists the device in
// its new namespace; and the waits for RTNL.
var Move = Set{
	Roots: []string{"rtnl_newlink", "rtnl_setlink", "rtnl_lock"},
	Functions: []string{
		// waits
		"synchronize_rcu", "synchronize_rcu_expedited", "synchronize_net", "rcu_barrier",
		// the move
		"__dev_change_net_namespace", "netif_change_net_namespace", "rtnl_group_changelink", "do_setlink",
		"dev_close", "dev_shutdown", "call_netdevice_notifiers_info", "dev_uc_flush", "dev_mc_flush",
		"unlist_netdevice", "list_netdevice", "dev_index_reserve", "netdev_name_in_use",
		"kobject_uevent_env", "device_rename", "netdev_change_owner", "rtmsg_ifinfo_build_skb", "rtmsg_ifinfo_send",
	},
}

// maxBufferKiB bounds the trace buffers of all CPUs together (the buffer
// is per CPU: a large count on a large machine must not take its memory).
const maxBufferKiB = 512 << 10

// Profiler traces one phase at a time.
type Profiler struct {
	roots  []string // the set's roots the kernel has
	traced []string // the set's functions the kernel has
	// Missing are the set's functions the kernel has no trace point for
	// (inlined, or not in this version).
	Missing []string
	bufKiB  int
	saved   []setting // what Start changed, to put back
}

// New prepares the function_graph tracer for the set: it fails with
// ErrUnavailable where tracing is not possible, and when none of the
// roots can be traced. bufKiB is the trace buffer per CPU (about 1 KiB a
// device; a full buffer loses calls, which Stop reports as an error).
func New(s Set, bufKiB int) (*Profiler, error) {
	if runtime.GOARCH != "amd64" {
		// The trace format is the same elsewhere, but PernetHandlers'
		// struct offsets are x86_64's.
		return nil, fmt.Errorf("%w: kernel profiles are built for x86_64 kernels", ErrUnavailable)
	}
	if _, err := os.Stat(tracefs.Path("available_tracers")); err != nil {
		return nil, fmt.Errorf("%w: no %s (tracefs not mounted, or tracing blocked)", ErrUnavailable, tracefs.Dir)
	}
	if tracers, _ := tracefs.Read("available_tracers"); !slices.Contains(strings.Fields(tracers), "function_graph") {
		return nil, fmt.Errorf("%w: no function_graph tracer (CONFIG_FUNCTION_GRAPH_TRACER)", ErrUnavailable)
	}
	avail, err := tracefs.Read("available_filter_functions")
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	have := map[string]bool{}
	for _, line := range strings.Split(avail, "\n") {
		if fn, _, _ := strings.Cut(line, " "); fn != "" {
			have[fn] = true // "fn [module]" for modules
		}
	}
	p := &Profiler{bufKiB: min(max(bufKiB, 4096), maxBufferKiB/runtime.NumCPU())}
	roots := 0
	for i, fn := range append(slices.Clone(s.Roots), s.Functions...) {
		switch {
		case slices.Contains(p.traced, fn):
		case have[fn]:
			p.traced = append(p.traced, fn)
			if i < len(s.Roots) {
				roots++
			}
		default:
			p.Missing = append(p.Missing, fn)
		}
	}
	if roots == 0 {
		return nil, fmt.Errorf("%w: none of %v can be traced here", ErrUnavailable, s.Roots)
	}
	p.roots = rootsOf(s.Roots, p.traced)
	return p, nil
}

func rootsOf(roots, traced []string) []string {
	var out []string
	for _, r := range roots {
		if slices.Contains(traced, r) {
			out = append(out, r)
		}
	}
	return out
}

// ErrTracerBusy reports a tracer that someone else is using (a tracer on,
// filters set): devbulk does not take it over. It matches
// devbulk.ErrNotSupported: the profile cannot be had here now.
var ErrTracerBusy = devbulk.NotSupported("the kernel's tracer is in use (current_tracer is not nop, or a function filter is set): devbulk leaves it alone")

// setting is one tracefs file Start writes, and what it held before.
type setting struct{ file, value, old string }

// Start starts tracing, after checking that the tracer is free and noting
// every setting it changes, which Stop puts back.
func (p *Profiler) Start() error {
	if cur, _ := tracefs.Read("current_tracer"); strings.TrimSpace(cur) != "nop" {
		return ErrTracerBusy
	}
	for _, f := range []string{"set_ftrace_filter", "set_graph_function"} {
		if v, _ := tracefs.Read(f); !unset(v) {
			return ErrTracerBusy
		}
	}
	p.saved = nil
	steps := []setting{
		{file: "tracing_on", value: "0"},
		{file: "buffer_size_kb", value: strconv.Itoa(p.bufKiB)},
		{file: "set_ftrace_filter", value: strings.Join(p.traced, "\n")},
		{file: "set_graph_function", value: strings.Join(p.roots, "\n")},
		{file: "max_graph_depth", value: "0"},
		// The parser reads these columns (graph.go).
		{file: "options/funcgraph-cpu", value: "1"},
		{file: "options/funcgraph-proc", value: "1"},
		{file: "options/funcgraph-duration", value: "1"},
		{file: "options/funcgraph-overhead", value: "1"},
		{file: "options/funcgraph-tail", value: "1"},
		{file: "options/funcgraph-irqs", value: "0"},
		{file: "options/funcgraph-abstime", value: "0"},
		{file: "options/funcgraph-retval", value: "0"}, // 6.5+
		{file: "trace", value: ""},
		{file: "current_tracer", value: "function_graph"},
		{file: "tracing_on", value: "1"},
	}
	for _, st := range steps {
		old, err := tracefs.Read(st.file)
		if err != nil && st.file == "options/funcgraph-retval" {
			continue // older kernels have no such option
		}
		st.old = oldValue(st.file, old)
		if err == nil {
			err = tracefs.Write(st.file, st.value)
		}
		if err != nil {
			p.reset()
			return fmt.Errorf("starting the kernel profile: %w", err)
		}
		p.saved = append(p.saved, st)
	}
	return nil
}

// unset reports whether a filter file is empty ("#### all functions
// enabled ####" is how an unset one reads).
func unset(v string) bool {
	v = strings.TrimSpace(v)
	return v == "" || strings.HasPrefix(v, "#### all functions enabled")
}

// oldValue is what to write back to a file: buffer_size_kb reads "7
// (expanded: 1408)" before its first use, filters read a banner when unset.
func oldValue(file, v string) string {
	v = strings.TrimSpace(v)
	switch {
	case file == "buffer_size_kb":
		if _, exp, ok := strings.Cut(v, "(expanded: "); ok {
			return strings.TrimSuffix(exp, ")")
		}
	case file == "set_ftrace_filter" || file == "set_graph_function":
		if unset(v) {
			return ""
		}
	}
	return v
}

// Stop stops tracing and totals the trace for a phase of wall time wallNS
// over units devices (or namespaces); with wallNS 0, shares are of the
// traced roots' time (the cleanup worker's, for Netns). It fails when the
// trace buffer lost calls. The tracer's settings are put back either way.
func (p *Profiler) Stop(wallNS int64, units int) (*Profile, error) {
	defer p.reset()
	if err := tracefs.Write("tracing_on", "0"); err != nil {
		return nil, err
	}
	lost, err := lostEvents()
	switch {
	case err != nil:
		return nil, fmt.Errorf("reading the trace buffer's statistics: %w", err)
	case lost > 0:
		return nil, fmt.Errorf("the trace buffer lost %d events (%d KiB a CPU): the profile would be incomplete", lost, p.bufKiB)
	}
	f, err := os.Open(tracefs.Path("trace"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	calls, outer, unmatched, err := graphTotals(f)
	if err != nil {
		return nil, fmt.Errorf("reading the trace: %w", err)
	}
	return profileOf(calls, outer, unmatched, wallNS, units), nil
}

// profileOf makes the phase's profile from the trace's totals.
func profileOf(calls []Call, outerNS int64, unmatched int, wallNS int64, units int) *Profile {
	if wallNS <= 0 {
		wallNS = outerNS
	}
	pr := &Profile{UnattributedNS: wallNS - outerNS, Unmatched: unmatched}
	for _, c := range calls {
		e := Entry{Function: c.Function, Calls: c.Calls, TotalNS: c.SelfNS, InclusiveNS: c.InclusiveNS}
		if units > 0 {
			e.PerDeviceNS = c.SelfNS / int64(units)
		}
		if wallNS > 0 {
			e.Share = float64(c.SelfNS) / float64(wallNS)
		}
		pr.Entries = append(pr.Entries, e)
	}
	slices.SortStableFunc(pr.Entries, func(a, b Entry) int { return int(b.TotalNS - a.TotalNS) })
	return pr
}

// reset puts back what Start changed, in reverse order (the tracer off
// first), and empties the trace.
func (p *Profiler) reset() {
	_ = tracefs.Write("tracing_on", "0")
	_ = tracefs.Write("current_tracer", "nop")
	_ = tracefs.Write("trace", "")
	for i := len(p.saved) - 1; i >= 0; i-- {
		st := p.saved[i]
		if st.file != "trace" && st.file != "current_tracer" {
			_ = tracefs.Write(st.file, st.old)
		}
	}
	p.saved = nil
}

var lostRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^(?:overrun|dropped events): (\d+)$`) })

// lostEvents sums the overruns and dropped events of every CPU's buffer.
func lostEvents() (int, error) {
	cpus, err := os.ReadDir(tracefs.Path("per_cpu"))
	if err != nil {
		return 0, err
	}
	lost := 0
	for _, c := range cpus {
		s, err := tracefs.Read("per_cpu/" + c.Name() + "/stats")
		if err != nil {
			return 0, err
		}
		for _, m := range lostRE().FindAllStringSubmatch(s, -1) {
			n, _ := strconv.Atoi(m[1])
			lost += n
		}
	}
	return lost, nil
}
