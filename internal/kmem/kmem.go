// Package kmem reads the kernel's memory counters from /proc/meminfo and
// /proc/slabinfo, so that a phase can say what its devices cost the
// kernel. The counters are the machine's: whatever else runs meanwhile
// counts too, and devbulk never drops caches to make them quieter (it runs
// beside production).
package kmem

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
)

// Counters are /proc/meminfo's kernel-side counters, in KiB, and the slab
// objects /proc/slabinfo says are allocated.
type Counters struct {
	SlabReclaimable   int64 // SReclaimable
	SlabUnreclaimable int64 // SUnreclaim
	Percpu            int64
	VmallocUsed       int64
	MemAvailable      int64
	// SlabObjects is the KiB of allocated slab objects (active_objs ×
	// objsize over /proc/slabinfo), when Objects: unlike meminfo's slab
	// pages, it grows as soon as a device is made, even into free slots of
	// slabs an earlier delete left (which hid several MiB at small N), and
	// no CPU holds back its count (meminfo's lag up to 24 pages a CPU).
	SlabObjects int64
	Objects     bool // slabinfo was read (root only)
}

// Read reads the counters; ok is false where /proc/meminfo is not readable
// or lacks one of them.
func Read() (c Counters, ok bool) {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return c, false
	}
	if c, ok = parse(b); ok {
		if s, err := os.ReadFile("/proc/slabinfo"); err == nil {
			c.SlabObjects, c.Objects = parseSlabinfo(s)
		}
	}
	return c, ok
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

// parseSlabinfo sums active_objs × objsize (the second and fourth
// columns) over slabinfo 2.1's caches, in KiB; ok is false for another
// format.
func parseSlabinfo(b []byte) (kib int64, ok bool) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	if !sc.Scan() || !bytes.HasPrefix(sc.Bytes(), []byte("slabinfo - version: 2.")) {
		return 0, false
	}
	var bytesHeld int64
	for sc.Scan() {
		f := bytes.Fields(sc.Bytes())
		if len(f) < 4 || f[0][0] == '#' {
			continue
		}
		objs, err1 := strconv.ParseInt(string(f[1]), 10, 64)
		size, err2 := strconv.ParseInt(string(f[3]), 10, 64)
		if err1 != nil || err2 != nil {
			return 0, false
		}
		bytesHeld += objs * size
	}
	return bytesHeld >> 10, true
}

// Sub is c - before, field by field; Objects only when both have them.
func (c Counters) Sub(before Counters) Counters {
	return Counters{c.SlabReclaimable - before.SlabReclaimable, c.SlabUnreclaimable - before.SlabUnreclaimable,
		c.Percpu - before.Percpu, c.VmallocUsed - before.VmallocUsed, c.MemAvailable - before.MemAvailable,
		c.SlabObjects - before.SlabObjects, c.Objects && before.Objects}
}

// Kernel is the memory the kernel holds for itself by meminfo: slab (both
// kinds), per-CPU and vmalloc.
func (c Counters) Kernel() int64 {
	return c.SlabReclaimable + c.SlabUnreclaimable + c.Percpu + c.VmallocUsed
}

// Devices is what devices hold, as closely as the counters tell: the slab
// objects, per-CPU and vmalloc memory where slabinfo was read, else Kernel.
func (c Counters) Devices() int64 {
	if c.Objects {
		return c.SlabObjects + c.Percpu + c.VmallocUsed
	}
	return c.Kernel()
}
