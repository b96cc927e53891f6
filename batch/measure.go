package batch

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/devbulk/devbulk/internal/result"

	"github.com/devbulk/devbulk/nlbatch"
)

// Phase is what batch measures of one create, move or delete phase: the
// devices done, the kernel's confirmations, the wall and CPU time, the
// socket's use. What instruments beside the phase saw (a bystander, RCU
// counts, a kernel profile, kernel memory) is bench.Phase's.
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
	UserNS int64 `json:"user_ns"`
	SysNS  int64 `json:"sys_ns"`
	// GCs and GCNS are devbulk's own garbage collections during the phase
	// and the runtime's estimate of their time (result.GC: processor time
	// it gave the collector, which a busy machine can make exceed the CPU
	// the OS gave devbulk); absent for the ip command's phases.
	GCs           uint32  `json:"gcs,omitempty"`
	GCNS          int64   `json:"gc_ns,omitempty"`
	DevicesPerSec float64 `json:"devices_per_sec"`
	MsPerDevice   float64 `json:"ms_per_device"`
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

// meter measures the wall and CPU time of a phase done by this process,
// and its collector's share.
type meter struct {
	start     time.Time
	user, sys int64
	gcs       uint32
	gcNS      int64
}

func startMeter() meter {
	m := meter{}
	m.gcs, m.gcNS = result.GC()
	m.user, m.sys = result.CPU(false)
	m.start = time.Now()
	return m
}

// stop fills the phase's times and rates.
func (m meter) stop(p *Phase) {
	wall := time.Since(m.start)
	user, sys := result.CPU(false)
	gcs, gcNS := result.GC()
	p.WallNS, p.UserNS, p.SysNS = wall.Nanoseconds(), user-m.user, sys-m.sys
	p.GCs, p.GCNS = gcs-m.gcs, max(0, gcNS-m.gcNS)
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
func latencies(res []nlbatch.Result) *Latency { return summarize(sentLatencies(res)) }

// sentLatencies are the latencies of the requests that were sent and
// answered.
func sentLatencies(res []nlbatch.Result) []int64 {
	var ds []int64
	for _, r := range res {
		if r.Sent && r.Err != nlbatch.ErrAckLost {
			ds = append(ds, r.Latency.Nanoseconds())
		}
	}
	return ds
}

// summarize is the distribution of latencies ds (nil when there are none).
func summarize(ds []int64) *Latency {
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
