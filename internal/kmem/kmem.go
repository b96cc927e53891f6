// Package kmem reads the kernel's memory counters from /proc/meminfo, so
// that a phase can say what its devices cost the kernel. The counters are
// the machine's: whatever else runs meanwhile counts too, and devbulk never
// drops caches to make them quieter (it runs beside production).
package kmem

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
)

// Counters are /proc/meminfo's kernel-side counters, in KiB.
type Counters struct {
	SlabReclaimable   int64 // SReclaimable
	SlabUnreclaimable int64 // SUnreclaim
	Percpu            int64
	VmallocUsed       int64
	MemAvailable      int64
}

// Read reads the counters; ok is false where /proc/meminfo is not readable
// or lacks one of them.
func Read() (c Counters, ok bool) {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return c, false
	}
	return parse(b)
}

func parse(b []byte) (c Counters, ok bool) {
	fields := map[string]*int64{"SReclaimable": &c.SlabReclaimable, "SUnreclaim": &c.SlabUnreclaimable,
		"Percpu": &c.Percpu, "VmallocUsed": &c.VmallocUsed, "MemAvailable": &c.MemAvailable}
	seen := 0
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		name, rest, found := bytes.Cut(sc.Bytes(), []byte(":"))
		p := fields[string(name)]
		if !found || p == nil {
			continue
		}
		f := bytes.Fields(rest)
		if len(f) == 0 {
			continue
		}
		v, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil {
			continue
		}
		*p = v
		seen++
	}
	return c, seen == len(fields)
}

// Sub is c minus before, counter by counter.
func (c Counters) Sub(before Counters) Counters {
	return Counters{c.SlabReclaimable - before.SlabReclaimable, c.SlabUnreclaimable - before.SlabUnreclaimable,
		c.Percpu - before.Percpu, c.VmallocUsed - before.VmallocUsed, c.MemAvailable - before.MemAvailable}
}

// Kernel is the memory the kernel holds in these counters: slab (both
// kinds), per-CPU and vmalloc.
func (c Counters) Kernel() int64 {
	return c.SlabReclaimable + c.SlabUnreclaimable + c.Percpu + c.VmallocUsed
}
