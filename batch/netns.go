package batch

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/devbulk/devbulk/internal/nsthread"
	"github.com/devbulk/devbulk/nlbatch"
	"github.com/vishvananda/netns"
)

// Namespace is a throwaway network namespace dedicated to one run. Only
// devbulk's file descriptors hold it: if devbulk dies, the kernel dismantles
// it with everything inside, so nothing is left behind.
type Namespace struct {
	NS       netns.NsHandle
	conns    []*nlbatch.Conn
	baseline int // live net_namespace objects before it existed; -1 unknown
}

// NewNamespace creates a throwaway namespace.
func NewNamespace() (*Namespace, error) {
	primeOnce.Do(prime)
	n := &Namespace{baseline: -1}
	if c, ok := netnsObjects(); ok {
		n.baseline = c
	}
	ns, err := nsthread.New()
	if err != nil {
		return nil, err
	}
	n.NS = ns
	return n, nil
}

// Dial opens a netlink socket in the namespace; Release closes it.
func (n *Namespace) Dial() (*nlbatch.Conn, error) {
	c, err := nlbatch.Dial(n.NS, nlbatch.Options{})
	if err != nil {
		return nil, err
	}
	n.conns = append(n.conns, c)
	return c, nil
}

// Release drops devbulk's hold on the namespace (its sockets and handle);
// the kernel then dismantles it asynchronously.
func (n *Namespace) Release() {
	for _, c := range n.conns {
		c.Close()
	}
	n.conns = nil
	if n.NS.IsOpen() {
		n.NS.Close()
	}
}

// DrainMethod says how WaitFreed decides that the kernel has finished.
const DrainMethod = "net_namespace slab objects back to the count before the namespace existed " +
	"(/sys/kernel/slab/net_namespace/objects read after writing its shrink file, polled every 2 ms); " +
	"kernels that defer the final free of a struct net (6.13+) free the previous one at the end of the " +
	"cleanup run, so the count still returns to the baseline when this namespace's run is over"

// WaitFreed polls until the kernel has freed the released namespace and
// returns when it saw that. It fails when the count cannot be read or ctx
// ends first. Concurrent namespace churn by other programs skews it.
func (n *Namespace) WaitFreed(ctx context.Context) (time.Time, error) {
	if n.baseline < 0 {
		return time.Time{}, fmt.Errorf("net_namespace slab objects are not readable here (needs SLUB sysfs and root)")
	}
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for {
		if c, ok := netnsObjects(); ok && c <= n.baseline {
			return time.Now(), nil
		}
		select {
		case <-ctx.Done():
			return time.Time{}, fmt.Errorf("namespace not freed: %w", ctx.Err())
		case <-tick.C:
		}
	}
}

const slabDir = "/sys/kernel/slab/net_namespace"

// netnsObjects returns the number of allocated struct net. SLUB counts
// objects of per-CPU slabs as in use, so the CPU slabs are flushed first.
func netnsObjects() (int, bool) {
	_ = os.WriteFile(slabDir+"/shrink", []byte("1"), 0)
	b, err := os.ReadFile(slabDir + "/objects")
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0, false
	}
	c, err := strconv.Atoi(f[0])
	return c, err == nil
}

var primeOnce sync.Once

// prime dismantles one empty namespace before the first measurement. On
// kernels that defer the last struct net's free until the next cleanup run,
// this leaves one deferred object, so that every later namespace's run frees
// one and the count returns to its baseline.
func prime() {
	before, ok := netnsObjects()
	if !ok {
		return
	}
	ns, err := nsthread.New()
	if err != nil {
		return
	}
	ns.Close()
	// The empty namespace's run takes milliseconds; wait until the count
	// is back to before, or holds one more (the deferred object), stably.
	deadline := time.Now().Add(2 * time.Second)
	stable := 0
	for time.Now().Before(deadline) && stable < 50 {
		time.Sleep(2 * time.Millisecond)
		c, _ := netnsObjects()
		switch {
		case c <= before:
			return
		case c == before+1:
			stable++
		default:
			stable = 0
		}
	}
}
