package main

import (
	"runtime"
	"runtime/debug"
)

// The Go heap's pacing, unless GOGC and GOMEMLIMIT say otherwise. devbulk's
// garbage is mostly netlink answers, read and parsed a window at a time;
// with Go's default (GOGC=100: the heap grows to twice what is live) a bench
// of 20 000 devices peaked at 38 MiB of RSS. A tighter pace and a soft
// limit keep it near what is live (docs/measurements.md, "Memory"). The tight pace starts
// only once the live heap passes tightFrom: below it, GOGC=25's 1 MiB
// minimum heap made a group delete of 2000 devices collect seven times
// before its request (~5 ms of its start-up, docs/measurements.md, "The scripted path").
const (
	gcPercent   = 25
	memoryLimit = 40 << 20
	tightFrom   = 4 << 20
)

// paceHeap sets the pacing above, adjusted after every collection to the
// heap it found live.
func paceHeap(env func(string) string) {
	limit, pace := env("GOMEMLIMIT") == "", env("GOGC") == ""
	if limit {
		debug.SetMemoryLimit(memoryLimit)
	}
	tight := false
	afterEachGC(func(live uint64) {
		if pace && !tight && live > tightFrom {
			debug.SetGCPercent(gcPercent)
			tight = true
		}
		if limit {
			debug.SetMemoryLimit(limitFor(live))
		}
	})
}

// limitFor is the soft memory limit for a live heap: memoryLimit, or twice
// what is live once that is more. A fixed limit under a live heap that has
// outgrown it makes the collector run without end: a parallel delete of
// 100 000 devices spent 646 s of its 709 s in devbulk's own user time so
// (docs/bystanders.md).
func limitFor(live uint64) int64 { return max(memoryLimit, 2*int64(live)) }

// afterEachGC calls fn, on the finalizer goroutine (one call at a time),
// after each collection with about the heap it found live.
func afterEachGC(fn func(live uint64)) {
	type sentinel struct{ _ *int } // a pointer: never a tiny allocation, whose finalizer may not run
	var arm func()
	arm = func() {
		runtime.SetFinalizer(&sentinel{}, func(*sentinel) {
			fn(liveHeap())
			arm()
		})
	}
	arm()
}

// liveHeap is about the heap the last collection found live: read by the
// finalizer right after it, HeapAlloc is that plus what was allocated
// since. (runtime/metrics' exact figure cost every start 0.5 ms of package
// initialisation, docs/measurements.md, "What start-up is made of".)
func liveHeap() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
