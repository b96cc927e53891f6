package batch

import (
	"bytes"
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
	"golang.org/x/sys/unix"
)

// Namespace is a throwaway network namespace dedicated to one run. Only
// devbulk's file descriptors hold it: if devbulk dies, the kernel dismantles
// it with everything inside, so nothing is left behind.
type Namespace struct {
	NS    netns.NsHandle
	conns []*nlbatch.Conn
	// live is the count of net_namespace objects just before the release,
	// this one included; -1 until Settle, or when unreadable.
	live int
}

// NewNamespace creates a throwaway namespace.
func NewNamespace() (*Namespace, error) {
	primeOnce.Do(prime)
	n := &Namespace{live: -1}
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

// Settle prepares WaitFreed: it waits (up to a minute) until no namespace
// is being dismantled, then counts the live ones, this one included.
// Release calls it when the caller has not.
func (n *Namespace) Settle() {
	waitWorkerIdle(time.Minute)
	if c, ok := netnsObjects(); ok {
		n.live = c
	}
}

// Release drops devbulk's hold on the namespace (its sockets and handle);
// the kernel then dismantles it asynchronously.
func (n *Namespace) Release() {
	if !n.NS.IsOpen() {
		return
	}
	if n.live < 0 {
		n.Settle()
	}
	for _, c := range n.conns {
		c.Close()
	}
	n.conns = nil
	n.NS.Close()
}

// ReleaseAndWait releases the namespace and waits, at most timeout, until
// the kernel has dismantled it, so that what comes next does not share the
// machine with that work.
func (n *Namespace) ReleaseAndWait(timeout time.Duration) error {
	n.Release()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	_, err := n.WaitFreed(ctx)
	return err
}

// DrainMethod says how WaitFreed decides that the kernel has finished.
const DrainMethod = "net_namespace slab objects one below their count just before the release " +
	"(/sys/kernel/slab/net_namespace/objects read after writing its shrink file, only while no kworker " +
	"runs the netns workqueue: comm \"+netns\"), polled every 2 ms; kernels that defer the final " +
	"free of a struct net (6.13+) free the previous one at the end of the cleanup run, so the count " +
	"still drops by one when this namespace's run is over"

// WaitFreed polls until the kernel has freed the released namespace and
// returns when it saw that. It fails when the count cannot be read or ctx
// ends first. Concurrent namespace churn by other programs skews it.
func (n *Namespace) WaitFreed(ctx context.Context) (time.Time, error) {
	if n.live < 0 {
		return time.Time{}, fmt.Errorf("net_namespace slab objects are not readable here (needs SLUB sysfs and root)")
	}
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for {
		// The slab is read (and its per-CPU slabs flushed) only while no
		// cleanup work runs, so the polling does not disturb the worker.
		if !netnsWorkerBusy() {
			if c, ok := netnsObjects(); ok && c < n.live {
				return time.Now(), nil
			}
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
	if err := os.WriteFile(slabDir+"/shrink", []byte("1"), 0); err != nil {
		return 0, false // unflushed counts would never come down
	}
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

// netnsWorkerBusy reports whether a kworker is executing netns cleanup work
// (the kernel names a busy worker "kworker/...+netns").
func netnsWorkerBusy() bool { return workers.busy() }

// workerWatch reads the comm of kernel workers only, rescanning /proc for
// new ones every 200 ms, so that polling stays light next to the kworker it
// watches.
type workerWatch struct {
	mu      sync.Mutex
	pids    []string
	scanned time.Time
	buf     [64]byte
}

var workers workerWatch

func (w *workerWatch) busy() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if time.Since(w.scanned) > 200*time.Millisecond {
		w.rescan()
	}
	for _, pid := range w.pids {
		if comm := w.comm(pid); bytes.Contains(comm, []byte("+netns")) {
			return true
		}
	}
	return false
}

func (w *workerWatch) rescan() {
	w.pids, w.scanned = w.pids[:0], time.Now()
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if c := e.Name()[0]; c < '0' || c > '9' {
			continue
		}
		if bytes.HasPrefix(w.comm(e.Name()), []byte("kworker/")) {
			w.pids = append(w.pids, e.Name())
		}
	}
}

func (w *workerWatch) comm(pid string) []byte {
	fd, err := unix.Open("/proc/"+pid+"/comm", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	defer unix.Close(fd)
	n, err := unix.Read(fd, w.buf[:])
	if err != nil || n < 0 {
		return nil
	}
	return w.buf[:n]
}

// waitWorkerIdle waits until no netns cleanup work runs, at most max.
func waitWorkerIdle(max time.Duration) {
	for deadline := time.Now().Add(max); netnsWorkerBusy() && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
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
