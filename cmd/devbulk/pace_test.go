package main

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// The tight pace starts after the first collection that finds more than
// the threshold live, and not before.
func TestTightenPast(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	gcPercentAfterGC := func() int {
		// The finalizer runs on its own goroutine after the collection.
		for range 100 {
			runtime.GC()
			time.Sleep(10 * time.Millisecond)
			if p := debug.SetGCPercent(100); p != 100 {
				return p
			}
		}
		return 100
	}
	tightenPast(1<<40, 37)
	if p := gcPercentAfterGC(); p != 100 {
		t.Errorf("GOGC %d with less than 1 TiB live, want 100 still", p)
	}
	tightenPast(1, 37)
	if p := gcPercentAfterGC(); p != 37 {
		t.Errorf("GOGC %d after a collection with more than 1 byte live, want 37", p)
	}
}
