package batch

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/devbulk/devbulk/bystander"

	"github.com/devbulk/devbulk"
	"github.com/devbulk/devbulk/internal/kmem"
	"github.com/devbulk/devbulk/internal/result"
	"github.com/devbulk/devbulk/kprofile"

	"github.com/devbulk/devbulk/nlbatch"
)

// Phase is the measurement of one create or delete phase.
type Phase struct {
	Name     string `json:"phase"`            // "create", "move" or "delete"
	Tool     string `json:"tool"`             // "devbulk" or "iproute2"
	Strategy string `json:"strategy"`         // see CreateStrategy, MoveStrategy and DeleteStrategy
	Module   string `json:"module,omitempty"` // the module strategy: the module unloaded
	Devices  int    `json:"devices"`          // links the phase is about (lower devices not counted)
	Failed   int    `json:"failed"`           // links the phase could not create or delete
	// Deleted counts the links (lower devices not counted) whose delete the
	// kernel confirmed and that a lookup afterwards found gone.
	Deleted int `json:"deleted,omitempty"`
	// Moved counts the links (lower devices not counted) a move phase
	// named and found in the destination afterwards.
	Moved int `json:"moved,omitempty"`
	// Left says what became of the recorded devices a delete (or move) did not
	// remove (lower devices included).
	Left []Leftover `json:"left,omitempty"`
	// Vanished names the devices that were not the run's, were there when
	// the delete began and are gone after it: deleted meanwhile by someone
	// else, or taken along by devbulk's request (moved into the run's group
	// between devbulk's check and its group delete). devbulk cannot tell
	// which; it says so.
	Vanished []string `json:"vanished,omitempty"`
	// WallNS is the phase's wall time: until the kernel said every device was
	// done (for netns: until the namespace was freed, see FreedMethod).
	WallNS int64 `json:"wall_ns"`
	// UserNS and SysNS are the CPU time of the process doing the phase
	// (devbulk itself, or the ip command).
	UserNS        int64   `json:"user_ns"`
	SysNS         int64   `json:"sys_ns"`
	DevicesPerSec float64 `json:"devices_per_sec"`
	MsPerDevice   float64 `json:"ms_per_device"`
	// Bystander (bench --bystander) is what a prober in another namespace
	// waited during the phase (see package bystander).
	Bystander *bystander.Stats `json:"bystander,omitempty"`
	// Requests is the per-request send-to-ACK latency, where each request
	// has a sendmsg of its own (serial and parallel strategies).
	Requests *Latency `json:"requests,omitempty"`
	// Netlink socket use.
	Window   int `json:"window,omitempty"`
	Overruns int `json:"overruns,omitempty"`
	AcksLost int `json:"acks_lost,omitempty"`
	// Netns strategy: when the release returned, when the kernel finished.
	ReleaseNS   int64  `json:"release_ns,omitempty"`
	DrainNS     int64  `json:"drain_ns,omitempty"`
	DrainMethod string `json:"drain_method,omitempty"`
	// RCU counts, with --trace-rcu, the calls to each RCU wait and the
	// unregister batches ("unregister_batches") during the phase,
	// system-wide (the netns cleanup worker included).
	RCU map[string]int `json:"rcu_calls,omitempty"`
	// Profile (--profile) is where the phase's time went in the kernel, by
	// function, the largest first (see package kprofile); UnattributedNS is
	// the wall time it does not account for.
	Profile        []kprofile.Entry `json:"profile,omitempty"`
	UnattributedNS int64            `json:"unattributed_ns,omitempty"`
	// KernelMem (creation phases of a bench) is what the devices cost the
	// kernel in memory.
	KernelMem *KernelMem `json:"kernel_mem,omitempty"`
	// Errors holds the first distinct errors, with the kernel's text.
	Errors []string `json:"errors,omitempty"`

	firstErr error // the first of them, for errors.Is
}

// Latency summarizes per-request latencies, in nanoseconds.
type Latency struct {
	Count int   `json:"count"`
	P50   int64 `json:"p50_ns"`
	P99   int64 `json:"p99_ns"`
	Max   int64 `json:"max_ns"`
}

// meter measures the wall and CPU time of a phase done by this process.
type meter struct {
	start     time.Time
	user, sys int64
}

func startMeter() meter {
	m := meter{}
	m.user, m.sys = result.CPU(false)
	m.start = time.Now()
	return m
}

// stop fills the phase's times and rates.
func (m meter) stop(p *Phase) {
	wall := time.Since(m.start)
	user, sys := result.CPU(false)
	p.WallNS, p.UserNS, p.SysNS = wall.Nanoseconds(), user-m.user, sys-m.sys
	p.FillRates()
}

// FillRates derives DevicesPerSec and MsPerDevice from the wall time and
// the devices done (Devices minus Failed).
func (p *Phase) FillRates() {
	if n := p.Devices - p.Failed; n > 0 && p.WallNS > 0 {
		p.DevicesPerSec = float64(n) / (float64(p.WallNS) / 1e9)
		p.MsPerDevice = float64(p.WallNS) / 1e6 / float64(n)
	}
}

// latencies summarizes the latencies of the requests that got an answer.
func latencies(res []nlbatch.Result) *Latency {
	var ds []int64
	for _, r := range res {
		if r.Sent && r.Err != nlbatch.ErrAckLost {
			ds = append(ds, r.Latency.Nanoseconds())
		}
	}
	if len(ds) == 0 {
		return nil
	}
	slices.Sort(ds)
	return &Latency{Count: len(ds), P50: pct(ds, 50), P99: pct(ds, 99), Max: ds[len(ds)-1]}
}

// pct is the nearest-rank percentile of sorted values.
func pct(sorted []int64, p int) int64 {
	i := (p*len(sorted) + 99) / 100
	return sorted[max(0, i-1)]
}

// noteErrors records up to a few distinct errors in the phase.
func (p *Phase) noteErrors(errs ...error) {
	const keep = 5
	for _, err := range errs {
		if err == nil || len(p.Errors) >= keep {
			continue
		}
		if p.firstErr == nil {
			p.firstErr = err
		}
		s := err.Error()
		if !slices.Contains(p.Errors, s) {
			p.Errors = append(p.Errors, s)
		}
	}
}

// merge adds what another phase of the same work saw on its socket.
func (p *Phase) merge(q *Phase) {
	p.Window = max(p.Window, q.Window)
	p.Overruns += q.Overruns
	p.AcksLost += q.AcksLost
	for _, e := range q.Errors {
		p.noteErrors(errors.New(e))
	}
}

func (p *Phase) noteStats(st nlbatch.Stats) {
	p.Window = max(p.Window, st.FirstWindow)
	p.Overruns += st.Overruns
	p.AcksLost += st.AcksLost
}

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

// StartKernelMem reads the counters twice, noiseWindow apart, for the
// machine's noise; the function it returns reads them again and gives the
// deltas for n devices, or nil where the counters cannot be read.
func StartKernelMem() func(n int) *KernelMem {
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

// Waited is how much of the phase's wall time devbulk spent off the CPU
// (wall − user − sys, whole process): waiting for the kernel's answers,
// which includes a lock others hold (RTNL), RCU grace periods and CPUs
// busy elsewhere. 0 for a namespace release, whose time is the kernel's
// cleanup worker's.
func (p *Phase) Waited() int64 {
	if p.DrainMethod != "" || p.WallNS <= 0 {
		return 0
	}
	return max(0, p.WallNS-p.UserNS-p.SysNS)
}

// WaitNote says, when most of a phase's wall time (and at least 100 ms)
// was a wait, how much: what devbulk's own figures would not show. "" when
// it was not.
func (p *Phase) WaitNote() string {
	w := p.Waited()
	if w < int64(100*time.Millisecond) || 2*w < p.WallNS {
		return ""
	}
	return fmt.Sprintf("%s of its %s waiting off devbulk's CPU (%s on it): for the kernel's lock (RTNL) held by others, RCU grace periods, or busy CPUs",
		result.FormatNS(w), result.FormatNS(p.WallNS), result.FormatNS(p.UserNS+p.SysNS))
}
