package kprofile

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

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

// Profiler traces one phase at a time.
type Profiler struct {
	roots  []string // the set's roots the kernel has
	traced []string // the set's functions the kernel has
	// Missing are the set's functions the kernel has no trace point for
	// (inlined, or not in this version).
	Missing []string
	bufKiB  int
	oldBuf  string // buffer_size_kb before Start
}

// New prepares the function_graph tracer for the set: it fails with
// ErrUnavailable where tracing is not possible, and when none of the
// roots can be traced. bufKiB is the trace buffer per CPU (about 1 KiB a
// device; a full buffer loses calls, which Stop reports as an error).
func New(s Set, bufKiB int) (*Profiler, error) {
	if _, err := os.Stat(tracefs.Path("available_tracers")); err != nil {
		return nil, fmt.Errorf("%w: no %s (tracefs not mounted, or tracing blocked)", ErrUnavailable, tracefs.Dir)
	}
	if tracers, _ := tracefs.Read("available_tracers"); !slices.Contains(strings.Fields(tracers), "function_graph") {
		return nil, fmt.Errorf("%w: no function_graph tracer (CONFIG_FUNCTION_GRAPH_TRACER)", ErrUnavailable)
	}
	avail, err := tracefs.Read("available_filter_functions")
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	have := map[string]bool{}
	for _, line := range strings.Split(avail, "\n") {
		if fn, _, _ := strings.Cut(line, " "); fn != "" {
			have[fn] = true // "fn [module]" for modules
		}
	}
	p := &Profiler{bufKiB: max(bufKiB, 4096)}
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

// Start clears the trace and starts tracing.
func (p *Profiler) Start() error {
	p.oldBuf, _ = tracefs.Read("buffer_size_kb")
	steps := []struct{ file, value string }{
		{"tracing_on", "0"},
		{"current_tracer", "nop"},
		{"buffer_size_kb", strconv.Itoa(p.bufKiB)},
		{"set_ftrace_filter", strings.Join(p.traced, "\n")},
		{"set_graph_function", strings.Join(p.roots, "\n")},
		{"max_graph_depth", "0"},
		{"options/funcgraph-proc", "1"},
		{"options/funcgraph-tail", "1"},
		{"options/funcgraph-irqs", "0"},
		{"options/funcgraph-abstime", "0"},
		{"trace", ""},
		{"current_tracer", "function_graph"},
		{"tracing_on", "1"},
	}
	for _, s := range steps {
		if err := tracefs.Write(s.file, s.value); err != nil {
			p.reset()
			return fmt.Errorf("starting the kernel profile: %w", err)
		}
	}
	return nil
}

// Stop stops tracing and totals the trace for a phase of wall time wallNS
// over units devices (or namespaces); with wallNS 0, shares are of the
// traced roots' time (the cleanup worker's, for Netns). It fails when the
// trace buffer lost calls.
func (p *Profiler) Stop(wallNS int64, units int) (*Profile, error) {
	if err := tracefs.Write("tracing_on", "0"); err != nil {
		return nil, err
	}
	defer p.reset()
	if lost, err := lostEvents(); err != nil || lost > 0 {
		return nil, errors.Join(err, fmt.Errorf("the trace buffer lost %d events (%d KiB a CPU): the profile would be incomplete", lost, p.bufKiB))
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

// reset puts the tracer back as it was: nop, no filters, a small buffer.
func (p *Profiler) reset() {
	_ = tracefs.Write("current_tracer", "nop")
	_ = tracefs.Write("set_graph_function", "")
	_ = tracefs.Write("set_ftrace_filter", "")
	_ = tracefs.Write("trace", "")
	if old := strings.TrimSpace(p.oldBuf); old != "" && !strings.Contains(old, "expanded") {
		_ = tracefs.Write("buffer_size_kb", old)
	}
	_ = tracefs.Write("tracing_on", "1")
}

var lostRE = regexp.MustCompile(`(?m)^(?:overrun|dropped events): (\d+)$`)

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
		for _, m := range lostRE.FindAllStringSubmatch(s, -1) {
			n, _ := strconv.Atoi(m[1])
			lost += n
		}
	}
	return lost, nil
}
