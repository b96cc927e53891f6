// Package result holds what devbulk's measurements share: the process's
// CPU time and peak memory, and the compact duration format of the tables.
// (The header of every result document is devbulk.Header.)
package result

import (
	"fmt"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// CPU is the user and system time this process has used, in nanoseconds,
// with that of its waited-for children when children is set.
func CPU(children bool) (user, sys int64) {
	var ru unix.Rusage
	_ = unix.Getrusage(unix.RUSAGE_SELF, &ru)
	user, sys = ns(ru.Utime), ns(ru.Stime)
	if children {
		_ = unix.Getrusage(unix.RUSAGE_CHILDREN, &ru)
		user, sys = user+ns(ru.Utime), sys+ns(ru.Stime)
	}
	return user, sys
}

func ns(t unix.Timeval) int64 { return t.Sec*1e9 + int64(t.Usec)*1e3 }

// MaxRSSKiB is the process's peak resident set, in KiB: VmHWM, the peak of
// this program's own memory. getrusage's ru_maxrss is not that: Linux keeps
// in it the peak of the process before its execve, so devbulk started by a
// large parent (a Go test binary built with -race: 47 MiB) reported the
// parent's peak.
func MaxRSSKiB() int64 {
	if kib, ok := ProcKiB("/proc/self/status", "VmHWM"); ok {
		return kib
	}
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Maxrss
}

// ProcKiB reads the "key:   N kB" line of a /proc file (status, meminfo).
func ProcKiB(path, key string) (int64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, key+":"); ok {
			var kib int64
			if _, err := fmt.Sscanf(strings.TrimSpace(v), "%d kB", &kib); err == nil {
				return kib, true
			}
		}
	}
	return 0, false
}

// FormatNS prints nanoseconds compactly, with 3 significant digits, in the
// largest unit that keeps the number under 1000 once rounded (999.7 ms is
// "1s", never "1e+03ms").
func FormatNS(ns int64) string {
	v, unit := float64(ns)/1e3, 0
	units := []string{"µs", "ms", "s"}
	for unit < len(units)-1 && math.Abs(v) >= 999.5 {
		v, unit = v/1e3, unit+1
	}
	decimals := 2
	if a := math.Abs(v); a > 0 {
		decimals = max(0, 2-int(math.Floor(math.Log10(a))))
	}
	s := strconv.FormatFloat(v, 'f', decimals, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s + units[unit]
}

// started approximates when the Go runtime began counting CPU time for
// GCCPUFraction.
var started = time.Now()

// GC is the Go runtime's own account of its collector so far: the
// collections, and the time they took by GCCPUFraction (the share of
// GOMAXPROCS × time since start the runtime gave the collector, as of the
// last collection's end: it is updated only then; processor time, not
// the OS's CPU time, which runtime/metrics' /cpu/classes/gc estimates the
// same way and whose package would cost every start 0.5 ms).
func GC() (count uint32, cpuNS int64) {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	if m.NumGC == 0 {
		return 0, 0
	}
	last := time.Unix(0, int64(m.LastGC))
	return m.NumGC, int64(m.GCCPUFraction * float64(runtime.GOMAXPROCS(0)) * float64(last.Sub(started)))
}
