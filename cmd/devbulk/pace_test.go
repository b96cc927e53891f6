package main

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// settled runs collections until the finalizer-driven pacing has seen one:
// it returns GOGC and the memory limit then.
func settled(t *testing.T, done func() bool) {
	t.Helper()
	for range 100 {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
		if done() {
			return
		}
	}
	t.Fatal("no collection reached the pacing")
}

// gcPercentNow reads GOGC (setting it back).
func gcPercentNow() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// The tight pace starts after the first collection that finds more than
// tightFrom live, and not before; the soft limit follows a live heap that
// outgrows it (twice what is live), so that it never makes the collector
// run without end, and is memoryLimit below that.
func TestPaceHeap(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	paceHeap(func(string) string { return "" })
	settled(t, func() bool { return debug.SetMemoryLimit(-1) == memoryLimit })
	if p := gcPercentNow(); p != 100 {
		t.Errorf("GOGC %d with less than %d bytes live, want 100 still", p, tightFrom)
	}
	live := make([]byte, 3*memoryLimit/2) // 60 MiB live: over the fixed limit
	for i := range live {
		live[i] = 1
	}
	settled(t, func() bool { return debug.SetMemoryLimit(-1) >= 2*int64(len(live)) })
	if p := gcPercentNow(); p != gcPercent {
		t.Errorf("GOGC %d with %d bytes live, want %d", p, len(live), gcPercent)
	}
	runtime.KeepAlive(live)
	if l := limitFor(1 << 20); l != memoryLimit {
		t.Errorf("limit %d with 1 MiB live, want %d", l, memoryLimit)
	}
}
