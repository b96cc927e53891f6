package namespace

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/devbulk/devbulk/internal/netnsstat"
)

// Dedicated is a throwaway network namespace dedicated to one run. Only
// devbulk's file descriptors hold it: if devbulk dies, the kernel dismantles
// it with everything inside, so nothing is left behind.
type Dedicated struct {
	NS   NS
	held []io.Closer
	// live is the count of net_namespace objects just before the release,
	// this one included; -1 until Settle, or when unreadable.
	live int
}

// DedicatedName is how a throwaway namespace is named (it has no name of
// its own).
const DedicatedName = "(devbulk's throwaway namespace)"

// NewDedicated creates a throwaway namespace.
func NewDedicated() (*Dedicated, error) {
	Prime()
	n := &Dedicated{live: -1}
	h, err := Unshare()
	if err != nil {
		return nil, err
	}
	ino, err := inode(int(h))
	if err != nil {
		h.Close()
		return nil, err
	}
	n.NS = NS{Handle: h, Name: DedicatedName, ID: ID{Inode: ino}}
	return n, nil
}

// Hold keeps c (a socket in the namespace, which holds it) until Release
// closes it.
func (n *Dedicated) Hold(c io.Closer) { n.held = append(n.held, c) }

// Settle prepares WaitFreed: it waits (up to a minute) until no namespace
// is being dismantled, then counts the live ones, this one included.
// Release calls it when the caller has not.
func (n *Dedicated) Settle() {
	netnsstat.WaitWorkerIdle(time.Minute)
	if c, ok := netnsstat.Objects(); ok {
		n.live = c
	}
}

// Release drops devbulk's hold on the namespace (its sockets and handle);
// the kernel then dismantles it asynchronously.
func (n *Dedicated) Release() {
	if !n.NS.Handle.IsOpen() {
		return
	}
	if n.live < 0 {
		n.Settle()
	}
	for _, c := range n.held {
		c.Close()
	}
	n.held = nil
	n.NS.Close()
}

// ReleaseAndWait releases the namespace and waits, at most timeout, until
// the kernel has dismantled it, so that what comes next does not share the
// machine with that work.
func (n *Dedicated) ReleaseAndWait(timeout time.Duration) error {
	n.Release()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	_, err := n.WaitFreed(ctx)
	return err
}

// FreedMethod says how WaitFreed decides that the kernel has finished.
const FreedMethod = "net_namespace slab objects one below their count just before the release " +
	"(/sys/kernel/slab/net_namespace/objects read after writing its shrink file, only while no kworker " +
	"runs the netns workqueue: comm \"+netns\"), polled every 2 ms; kernels that defer the final " +
	"free of a struct net (6.13+) free the previous one at the end of the cleanup run, so the count " +
	"still drops by one when this namespace's run is over"

// WaitFreed polls until the kernel has freed the released namespace and
// returns when it saw that. It fails when the count cannot be read or ctx
// ends first. Concurrent namespace churn by other programs skews it.
func (n *Dedicated) WaitFreed(ctx context.Context) (time.Time, error) {
	if n.live < 0 {
		return time.Time{}, fmt.Errorf("net_namespace slab objects are not readable here (needs SLUB sysfs and root)")
	}
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for {
		// The slab is read (and its per-CPU slabs flushed) only while no
		// cleanup work runs, so the polling does not disturb the worker.
		if !netnsstat.WorkerBusy() {
			if c, ok := netnsstat.Objects(); ok && c < n.live {
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

var primeOnce sync.Once

// Prime dismantles one empty namespace before the first measurement, once per
// process. On kernels that defer the last struct net's free until the next
// cleanup run, this leaves one deferred object, so that every later
// namespace's run frees one and the count returns to its baseline.
func Prime() { primeOnce.Do(prime) }

func prime() {
	before, ok := netnsstat.Objects()
	if !ok {
		return
	}
	ns, err := Unshare()
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
		c, _ := netnsstat.Objects()
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
