// Package rcutrace counts the kernel's RCU waits — calls to synchronize_rcu,
// synchronize_rcu_expedited, synchronize_net and rcu_barrier — with kprobe
// events and hist triggers in tracefs, so a measurement can show why a batch
// is faster than one-by-one deletes, not only that it is. The counts are
// system-wide: they include the kernel's cleanup workers.
//
// It needs tracefs, CONFIG_KPROBE_EVENTS and CONFIG_HIST_TRIGGERS (Debian's
// kernels have them; devbulk's VM mounts tracefs). The function profiler
// would be simpler but is often not built (CONFIG_FUNCTION_PROFILER).
package rcutrace

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"

	"github.com/devbulk/devbulk"
	"github.com/devbulk/devbulk/internal/tracefs"
)

// Functions are the RCU waits counted. synchronize_net waits through
// synchronize_rcu or synchronize_rcu_expedited, so its calls are counted
// there as well.
var Functions = []string{"synchronize_rcu", "synchronize_rcu_expedited", "synchronize_net", "rcu_barrier"}

// Batches is the key under which Read reports unregister calls: calls to
// unregister_netdevice_many_notify (6.3+), or unregister_netdevice_many on
// older kernels, through which every unregister goes. One batch is one call;
// the nested call that gathers a lower device's vlans, and the per-namespace
// calls of a module unload (empty in namespaces without its devices), count
// too.
const Batches = "unregister_calls"

// batchFunctions are tried in order for Batches.
var batchFunctions = []string{"unregister_netdevice_many_notify", "unregister_netdevice_many"}

// ErrUnavailable is what New returns where the kernel or machine cannot
// count (it matches devbulk.ErrNotSupported); a Reset or Read that fails
// after New is an ordinary error.
var ErrUnavailable = devbulk.NotSupported("RCU call counts unavailable")

// group is the kprobe event group of devbulk's counters.
const group = "devbulk"

// Counter counts calls to Functions, and unregister calls, between Reset
// and Read.
type Counter struct {
	probes map[string]string // key in Read's result → probed function
}

// New creates the kprobe events (once per boot: they are reused).
func New() (*Counter, error) {
	if _, err := os.Stat(tracefs.Path("kprobe_events")); err != nil {
		return nil, fmt.Errorf("%w: no %s/kprobe_events (tracefs not mounted, tracing blocked, or no CONFIG_KPROBE_EVENTS)", ErrUnavailable, tracefs.Dir)
	}
	c := &Counter{probes: map[string]string{}}
	for _, fn := range Functions {
		if err := probe(fn); err != nil {
			return nil, err
		}
		c.probes[fn] = fn
	}
	for _, fn := range batchFunctions {
		if probe(fn) == nil {
			c.probes[Batches] = fn
			break
		}
	}
	if c.probes[Batches] == "" {
		return nil, fmt.Errorf("%w: no kprobe on %v", ErrUnavailable, batchFunctions)
	}
	if err := c.Reset(); err != nil { // here, the kernel cannot; later, a failure
		return nil, fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return c, nil
}

// probe creates the kprobe event of fn, unless it exists.
func probe(fn string) error {
	if _, err := os.Stat(tracefs.Path(eventDir(fn))); err == nil {
		return nil
	}
	def := fmt.Sprintf("p:%s/%s %s\n", group, fn, fn)
	if err := tracefs.Append("kprobe_events", def); err != nil {
		return fmt.Errorf("%w: kprobe on %s: %w", ErrUnavailable, fn, err)
	}
	return nil
}

func eventDir(fn string) string { return filepath.Join("events", group, fn) }

// Reset zeroes the counts: each event's hist trigger is removed and set again.
func (c *Counter) Reset() error {
	for _, fn := range c.probes {
		trigger := filepath.Join(eventDir(fn), "trigger")
		_ = tracefs.Append(trigger, "!hist:keys=common_type\n")
		if err := tracefs.Append(trigger, "hist:keys=common_type\n"); err != nil {
			return fmt.Errorf("hist trigger on %s (CONFIG_HIST_TRIGGERS?): %w", fn, err)
		}
	}
	return nil
}

var hits = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^\s*Hits:\s*(\d+)`) })

// Read returns the calls counted since the last Reset, by function, and
// the unregister calls under Batches.
func (c *Counter) Read() (map[string]int, error) {
	out := map[string]int{}
	for key, fn := range c.probes {
		b, err := os.ReadFile(tracefs.Path(eventDir(fn), "hist"))
		if err != nil {
			return nil, fmt.Errorf("reading the RCU counts: %w", err)
		}
		// The totals section ends the file.
		if i := bytes.LastIndex(b, []byte("Totals:")); i >= 0 {
			b = b[i:]
		}
		m := hits().FindSubmatch(b)
		if m == nil {
			return nil, fmt.Errorf("no hit count in %s's hist", fn)
		}
		out[key], _ = strconv.Atoi(string(m[1]))
	}
	return out, nil
}

// Close removes the hist triggers and the kprobe events. Two devbulk
// processes counting at once would reset each other's counts: run one.
func (c *Counter) Close() {
	for _, fn := range c.probes {
		_ = tracefs.Append(filepath.Join(eventDir(fn), "trigger"), "!hist:keys=common_type\n")
		_ = tracefs.Append("kprobe_events", fmt.Sprintf("-:%s/%s\n", group, fn))
	}
}
