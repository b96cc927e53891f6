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

// paceHeap sets the pacing above.
func paceHeap(env func(string) string) {
	if env("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
	}
	if env("GOGC") == "" {
		tightenPast(tightFrom, gcPercent)
	}
}

// tightenPast sets GOGC to percent after the first collection that finds
// more than bytes live (checked at the end of each collection, by a
// finalizer the collector runs).
func tightenPast(bytes uint64, percent int) {
	type sentinel struct{ _ *int } // a pointer: never a tiny allocation, whose finalizer may not run
	var arm func()
	arm = func() {
		runtime.SetFinalizer(&sentinel{}, func(*sentinel) {
			if liveHeap() > bytes {
				debug.SetGCPercent(percent)
				return
			}
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
