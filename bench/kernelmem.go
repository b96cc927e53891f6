package bench

import (
	"fmt"
	"time"

	"github.com/devbulk/devbulk"
	"github.com/devbulk/devbulk/internal/kmem"
)

// KernelMem is what a phase cost the kernel in memory: the deltas of
// /proc/meminfo's slab (reclaimable and not), per-CPU and vmalloc counters
// across it, and of the slab objects /proc/slabinfo holds, in KiB, and per
// device what the devices hold (Method: slab objects, per-CPU and vmalloc
// where slabinfo is readable, else meminfo's counters). They are the
// machine's counters: whatever else ran meanwhile counts too, and devbulk
// drops no caches to quiet them. MemAvailable's delta (negative: less
// available) includes what the kernel would reclaim.
//
// Where the figure would not be stable, PerDeviceKiB is 0 and Withheld
// says why: the devices grew the counters by less than MinKiB of Method
// (ifb, at 41 KiB each: N < 50 by slab objects, N < 800 by meminfo,
// whose slab pages hide what fills free slots), or by less than ten times
// what the counters moved in 20 ms with nothing created just before
// (NoiseKiB: other activity on the machine).
type KernelMem struct {
	PerDeviceKiB          float64 `json:"kernel_mem_per_device_kib"`
	Withheld              string  `json:"withheld,omitempty"`
	Method                string  `json:"method"`
	DevicesKiB            int64   `json:"devices_kib"`
	NoiseKiB              int64   `json:"noise_kib"`
	SlabObjectsKiB        int64   `json:"slab_objects_kib,omitempty"`
	SlabReclaimableKiB    int64   `json:"slab_reclaimable_kib"`
	SlabUnreclaimableKiB  int64   `json:"slab_unreclaimable_kib"`
	PercpuKiB             int64   `json:"percpu_kib"`
	VmallocKiB            int64   `json:"vmalloc_kib"`
	MemAvailableKiB       int64   `json:"mem_available_kib"`
	AvailablePerDeviceKiB float64 `json:"mem_available_per_device_kib"`
}

// The methods of KernelMem, and the least growth each gives a figure
// within 10% of the large-N one (ifb on 6.18, 2026-12-06: N=100 by slab
// objects, N=1000 by meminfo, in 30 cycles of each N; docs/measurements.md).
const (
	MethodObjects = "slab objects"
	MethodMeminfo = "meminfo"
	minObjectsKiB = 2 << 10
	minMeminfoKiB = 32 << 10
	noiseWindow   = 20 * time.Millisecond
	noiseFactor   = 10
)

// startKernelMem reads the counters twice, noiseWindow apart, for the
// machine's noise; the function it returns reads them again and gives the
// deltas for n devices, or nil where the counters cannot be read.
func startKernelMem() func(n int) *KernelMem {
	first, ok := kmem.Read()
	time.Sleep(noiseWindow)
	before, ok2 := kmem.Read()
	noise := before.Sub(first).Devices()
	return func(n int) *KernelMem {
		after, ok3 := kmem.Read()
		if !ok || !ok2 || !ok3 || n <= 0 {
			return nil
		}
		d := after.Sub(before)
		m := &KernelMem{
			Method: MethodMeminfo, DevicesKiB: d.Devices(), NoiseKiB: max(noise, -noise),
			SlabReclaimableKiB: d.SlabReclaimable, SlabUnreclaimableKiB: d.SlabUnreclaimable,
			PercpuKiB: d.Percpu, VmallocKiB: d.VmallocUsed, MemAvailableKiB: d.MemAvailable,
			AvailablePerDeviceKiB: float64(d.MemAvailable) / float64(n),
		}
		if d.Objects {
			m.Method, m.SlabObjectsKiB = MethodObjects, d.SlabObjects
		}
		m.judge(n)
		return m
	}
}

// judge sets the figure per device, or withholds it and says why.
func (m *KernelMem) judge(n int) {
	least := int64(minMeminfoKiB)
	if m.Method == MethodObjects {
		least = minObjectsKiB
	}
	switch {
	case m.DevicesKiB < 0:
		m.Withheld = fmt.Sprintf("the counters fell %d KiB while %s were made: other activity on the machine", -m.DevicesKiB, devbulk.Plural(n, "device"))
	case m.DevicesKiB < least:
		m.Withheld = fmt.Sprintf("the %s grew %d KiB, under the %d MiB from which the figure is stable", devbulk.Plural(n, "device"), m.DevicesKiB, least>>10)
	case m.DevicesKiB < noiseFactor*m.NoiseKiB:
		m.Withheld = fmt.Sprintf("the counters moved %d KiB in %v with nothing created: other activity on the machine", m.NoiseKiB, noiseWindow)
	default:
		m.PerDeviceKiB = float64(m.DevicesKiB) / float64(n)
	}
}
