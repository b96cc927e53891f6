package kprofile

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/devbulk/devbulk/internal/tracefs"
)

// pernetProbe reads, at each call of ops_exit_list(ops, net_exit_list),
// the handlers of that struct pernet_operations (x86_64 offsets, the same
// in 6.1 and 6.12: list 0, init 16, pre_exit 24, exit 32, exit_batch 40;
// 6.10+ add exit_batch_rtnl at 48, where 6.1 has the id pointer, which
// names no function). cleanup_net calls ops_exit_list for every registered
// pernet_operations, so one dismantled namespace shows them all.
const pernetProbe = "p:devbulk/pernet ops_exit_list pre_exit=+24(%di):x64 exit=+32(%di):x64 exit_batch=+40(%di):x64 exit_batch_rtnl=+48(%di):x64\n"

// Netns is the set for namespace teardown: the cleanup worker, its RCU
// waits and device unregistering, and the pernet handlers (see
// PernetHandlers).
func Netns(handlers []string) Set {
	return Set{
		Roots: []string{"cleanup_net"},
		Functions: append([]string{"synchronize_rcu", "synchronize_rcu_expedited", "rcu_barrier",
			"unregister_netdevice_many_notify", "unregister_netdevice_many", "netdev_run_todo", "rtnl_lock"}, handlers...),
	}
}

// PernetHandlers names the pernet exit handlers (pre_exit, exit,
// exit_batch, exit_batch_rtnl) of every registered struct
// pernet_operations: dismantle must release one network namespace (the
// kernel dismantles it; PernetHandlers waits for the cleanup run). The list differs
// between kernels and with the modules loaded: it is read, not written down.
func PernetHandlers(dismantle func() error) ([]string, error) {
	if _, err := os.Stat(tracefs.Path("kprobe_events")); err != nil {
		return nil, fmt.Errorf("%w: no %s/kprobe_events (CONFIG_KPROBE_EVENTS)", ErrUnavailable, tracefs.Dir)
	}
	_ = tracefs.Append("kprobe_events", "-:devbulk/pernet\n") // a leftover of a killed devbulk
	if err := tracefs.Append("kprobe_events", pernetProbe); err != nil {
		return nil, fmt.Errorf("%w: a kprobe on ops_exit_list: %v", ErrUnavailable, err)
	}
	defer func() {
		_ = tracefs.Write("events/devbulk/pernet/enable", "0")
		_ = tracefs.Append("kprobe_events", "-:devbulk/pernet\n")
	}()
	steps := []struct{ file, value string }{{"tracing_on", "0"}, {"current_tracer", "nop"}, {"trace", ""},
		{"events/devbulk/pernet/enable", "1"}, {"tracing_on", "1"}}
	for _, s := range steps {
		if err := tracefs.Write(s.file, s.value); err != nil {
			return nil, err
		}
	}
	if err := dismantle(); err != nil {
		return nil, err
	}
	// The cleanup run is asynchronous: it is over once it has recorded
	// ops_exit_list calls and then none for a while.
	var addrs []uint64
	seen := 0
	for deadline, quiet := time.Now().Add(time.Minute), 0; time.Now().Before(deadline) && quiet < 3; time.Sleep(100 * time.Millisecond) {
		trace, err := tracefs.Read("trace")
		if err != nil {
			return nil, err
		}
		n := strings.Count(trace, "pernet:")
		if n > 0 && n == seen {
			quiet++
		} else {
			quiet = 0
		}
		seen = n
		addrs, err = pernetAddrs(strings.NewReader(trace))
		if err != nil && n > 0 {
			return nil, err
		}
	}
	if err := tracefs.Write("tracing_on", "0"); err != nil {
		return nil, err
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("%w: the kprobe on ops_exit_list recorded nothing within a minute (no namespace was dismantled?)", ErrUnavailable)
	}
	ks, err := os.Open("/proc/kallsyms")
	if err != nil {
		return nil, err
	}
	defer ks.Close()
	names, err := textSymbols(ks, addrs)
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("%w: no pernet handler named (kallsyms hides addresses? kptr_restrict)", ErrUnavailable)
	}
	return names, nil
}

var pernetField = regexp.MustCompile(`\b(?:pre_exit|exit|exit_batch|exit_batch_rtnl)=0x([0-9a-f]+)`)

// pernetAddrs reads the handler addresses the pernet kprobe recorded, in
// first-seen order, without zeros (no such handler).
func pernetAddrs(r io.Reader) ([]uint64, error) {
	var out []uint64
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if !strings.Contains(sc.Text(), "pernet:") {
			continue
		}
		for _, m := range pernetField.FindAllStringSubmatch(sc.Text(), -1) {
			a, err := strconv.ParseUint(m[1], 16, 64)
			if err == nil && a != 0 && !slices.Contains(out, a) {
				out = append(out, a)
			}
		}
	}
	return out, sc.Err()
}

// textSymbols names the addresses that are functions in kallsyms ("addr
// t name [module]"), in the order of addrs; others (the id pointer where a
// kernel has no exit_batch_rtnl) are left out.
func textSymbols(r io.Reader, addrs []uint64) ([]string, error) {
	want := map[uint64]string{}
	for _, a := range addrs {
		want[a] = ""
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 3 || (f[1] != "t" && f[1] != "T") {
			continue
		}
		a, err := strconv.ParseUint(f[0], 16, 64)
		if err != nil {
			continue
		}
		if _, ok := want[a]; ok && want[a] == "" {
			want[a] = f[2]
		}
	}
	var out []string
	for _, a := range addrs {
		if n := want[a]; n != "" && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out, sc.Err()
}
