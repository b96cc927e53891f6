// Package netnsstat observes the kernel's network-namespace teardown from
// outside: how many struct net are allocated (the net_namespace slab, read
// exactly by flushing its per-CPU slabs first) and whether the netns cleanup
// worker is running (a busy kworker's comm ends in "+netns").
package netnsstat

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

const slabDir = "/sys/kernel/slab/net_namespace"

// Objects returns the number of allocated struct net. SLUB counts
// objects of per-CPU slabs as in use, so the CPU slabs are flushed first.
func Objects() (int, bool) {
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

// WorkerBusy reports whether a kworker is executing netns cleanup work
// (the kernel names a busy worker "kworker/...+netns").
func WorkerBusy() bool { return workers.busy() }

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

// WaitWorkerIdle waits until no netns cleanup work runs, at most max.
func WaitWorkerIdle(max time.Duration) {
	for deadline := time.Now().Add(max); WorkerBusy() && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
}

// SlabSize is the bytes of slab memory one struct net takes (object plus
// the allocator's padding), 0 when not readable.
func SlabSize() int {
	b, err := os.ReadFile(slabDir + "/slab_size")
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return n
}

// KernelCPU is the CPU time all CPUs have spent in the kernel since boot
// (system, irq and softirq of /proc/stat), in the kernel's USER_HZ ticks
// of 10 ms: it includes the work of kernel threads such as the netns
// cleanup worker, which no process's rusage shows.
func KernelCPU() (time.Duration, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, false
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line) // cpu user nice system idle iowait irq softirq ...
	if len(f) < 8 || f[0] != "cpu" {
		return 0, false
	}
	var ticks int64
	for _, i := range []int{3, 6, 7} {
		n, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil {
			return 0, false
		}
		ticks += n
	}
	return time.Duration(ticks) * 10 * time.Millisecond, true
}
