package bench

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/devbulk/devbulk/bystander"

	"github.com/devbulk/devbulk"
	"github.com/devbulk/devbulk/internal/result"
	"github.com/devbulk/devbulk/kernlog"
	"github.com/devbulk/devbulk/namespace"
	"github.com/devbulk/devbulk/rcutrace"
)

// Report is the result document of a bench: stable field names, documented
// in docs/method.md. Durations are integer nanoseconds.
type Report struct {
	devbulk.Header
	Kind string  `json:"kind"`
	Up   bool    `json:"up"`
	Runs []Cycle `json:"runs"`
	// MaxRSSKiB is devbulk's peak resident memory over the whole bench.
	MaxRSSKiB int64 `json:"max_rss_kib"`
	// Comparisons are devbulk against iproute2 (--compare), phase by phase.
	Comparisons []Comparison `json:"comparisons,omitempty"`
	// Against are the delete strategies against the fastest batch path of
	// the same count, and Creation the cost of creating one device: the
	// headline.
	Against  []Comparison `json:"strategies,omitempty"`
	Creation []Cost       `json:"creation,omitempty"`
	// Scaling (--namespaces) is each phase spread over K namespaces at
	// once against the same work in one: above 1, spreading is slower.
	Scaling []Comparison `json:"namespaces_scaling,omitempty"`
	// Influence (--bystander-influence) is each phase with the bystander
	// against the same phase with it paused: what the prober itself costs.
	Influence []Comparison `json:"bystander_influence,omitempty"`
	// BystanderIdle (--bystander) is the prober's idle baseline, measured
	// before the first phase: what each phase's Bystander is against.
	BystanderIdle *bystander.Stats `json:"bystander_idle,omitempty"`
	// BystanderTrace is every operation of the bystander: when it was due
	// and its latency, for the chart of its latency over time.
	BystanderTrace []bystander.Point `json:"bystander_trace,omitempty"`
	// Untraceable (--profile) are the profile's functions this kernel has
	// no trace point for (inlined, or not in this version): their time is
	// their callers'.
	Untraceable []string `json:"profile_untraceable,omitempty"`
	// KernelLog is what the kernel complained of during the bench, each
	// complaint with its phase (a finding), or why its log was not read.
	KernelLog *kernlog.Summary `json:"kernel_log,omitempty"`
	// Explain makes WriteTable say how figures were taken (bench
	// --explain); docs/method.md says it once for everyone else.
	Explain bool `json:"-"`
}

// Cycle is one create→delete cycle of Count links.
type Cycle struct {
	Count  int   `json:"count"`
	Repeat int   `json:"repeat"` // 1-based
	Create Phase `json:"create"`
	// Move (--move) is the move of the links into a second namespace,
	// between the creation and the delete, which runs there.
	Move   *Phase `json:"move,omitempty"`
	Delete Phase  `json:"delete"`
	// IPCreate and IPDelete are the same work done by iproute2 (--compare),
	// in a namespace of its own, before devbulk's cycle when IPFirst.
	IPCreate *Phase `json:"iproute2_create,omitempty"`
	IPDelete *Phase `json:"iproute2_delete,omitempty"`
	IPFirst  bool   `json:"iproute2_first,omitempty"`
	// Namespaces (--namespaces) is the count of namespaces the cycle's
	// devices were spread over, created and deleted at once, a worker each
	// (0: one, the plain cycle).
	Namespaces int `json:"namespaces,omitempty"`
	// BystanderPaused (--bystander-influence) says the bystander was
	// paused for this cycle: the same work, without the prober.
	BystanderPaused bool `json:"bystander_paused,omitempty"`
}

// Phases are the cycle's phases in the order they ran (devbulk's, then
// iproute2's), those that did.
func (c *Cycle) Phases() []*Phase {
	return slices.DeleteFunc([]*Phase{&c.Create, c.Move, &c.Delete, c.IPCreate, c.IPDelete}, func(p *Phase) bool { return p == nil })
}

// WriteTable prints the report for people.
func (r *Report) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "devbulk %s  %s  kind %s%s\n\n", r.Version, r.Machine(), r.Kind,
		map[bool]string{true: " (up)", false: ""}[r.Up])
	if err := r.writePhases(w); err != nil {
		return err
	}
	if notes := r.notes(); len(notes) > 0 {
		fmt.Fprintf(w, "\n%s\n", strings.Join(notes, "\n"))
	}
	if r.Explain {
		fmt.Fprintf(w, "\nuser, sys = devbulk's CPU during the phase (getrusage, the whole process; sys includes the kernel's work on devbulk's requests, done in its syscalls)\n"+
			"gc = devbulk's Go collector during the phase, and (its collections): the runtime's own estimate (GCCPUFraction as of the last collection), processor time it gave the collector, which on a busy machine can exceed the CPU the OS gave devbulk\n")
	}
	if r.Explain && hasNetns(r) {
		fmt.Fprintf(w, "netns wall = until the kernel freed the namespace: %s\n", namespace.FreedMethod)
	}
	if err := r.writeBystander(w); err != nil {
		return err
	}
	r.writeInfluence(w)
	if err := r.writeProfiles(w); err != nil {
		return err
	}
	if err := r.writeComparisons(w); err != nil {
		return err
	}
	r.writeHeadline(w)
	if r.KernelLog != nil {
		fmt.Fprintln(w)
		r.KernelLog.Write(w)
	}
	return nil
}

// Complaints counts the kernel's complaints during the bench (findings).
func (r *Report) Complaints() int {
	if r == nil || r.KernelLog == nil {
		return 0
	}
	return len(r.KernelLog.Findings)
}

// writePhases prints a row per phase. Columns that would hold only dashes
// are left out: request latencies exist for serial phases, iproute2's
// figures with --compare, the kernel's memory for creations where
// /proc/meminfo is readable.
func (r *Report) writePhases(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	var has columns
	for _, c := range r.Runs {
		has.ip = has.ip || c.IPCreate != nil || c.IPDelete != nil
		for _, p := range c.Phases() {
			has.lat = has.lat || p.Requests != nil
		}
		has.mem = has.mem || c.Create.KernelMem != nil
		has.gc = has.gc || slices.ContainsFunc(c.Phases(), func(p *Phase) bool { return p.GCs > 0 })
	}
	head := []string{"N", "rep", "phase", "strategy", "wall", "ms/dev", "dev/s", "user", "sys"}
	if has.gc {
		head = append(head, "gc")
	}
	if has.lat {
		head = append(head, "p50", "p99", "max")
	}
	if has.mem {
		head = append(head, "kernel KiB/dev")
	}
	if has.ip {
		head = append(head, "iproute2", "ip/devbulk")
	}
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	for _, c := range r.Runs {
		for _, pp := range [][2]*Phase{{&c.Create, c.IPCreate}, {c.Move, nil}, {&c.Delete, c.IPDelete}} {
			if pp[0] != nil {
				fmt.Fprintln(tw, strings.Join(phaseCells(c, pp[0], pp[1], has), "\t")+"\t")
			}
		}
	}
	return tw.Flush()
}

// columns are the table's optional columns.
type columns struct{ gc, lat, mem, ip bool }

// phaseCells is the row of phase p of cycle c, beside iproute2's ip.
func phaseCells(c Cycle, p, ip *Phase, has columns) []string {
	strategy := p.Strategy
	if p.Module != "" {
		strategy += " (" + p.Module + ")"
	}
	if c.BystanderPaused {
		strategy += " †"
	}
	if c.Namespaces > 0 {
		strategy += fmt.Sprintf(" in %d ns", c.Namespaces)
	}
	cells := []string{fmt.Sprint(c.Count), fmt.Sprint(c.Repeat), p.Name, strategy, result.FormatNS(p.WallNS),
		fmt.Sprintf("%.3f", p.MsPerDevice), fmt.Sprintf("%.0f", p.DevicesPerSec), result.FormatNS(p.UserNS), result.FormatNS(p.SysNS)}
	if has.gc {
		gc := "-"
		if p.GCs > 0 {
			gc = fmt.Sprintf("%s (%d)", result.FormatNS(p.GCNS), p.GCs)
		}
		cells = append(cells, gc)
	}
	if has.lat {
		lat := []string{"-", "-", "-"}
		if p.Requests != nil {
			lat = []string{result.FormatNS(p.Requests.P50), result.FormatNS(p.Requests.P99), result.FormatNS(p.Requests.Max)}
		}
		cells = append(cells, lat...)
	}
	if has.mem {
		mem := "-"
		if p.KernelMem != nil && p.KernelMem.Withheld == "" {
			mem = fmt.Sprintf("%.1f", p.KernelMem.PerDeviceKiB)
		}
		cells = append(cells, mem)
	}
	if has.ip {
		ipWall, ratio := "-", "-"
		if ip != nil && ip.WallNS > 0 {
			ipWall = result.FormatNS(ip.WallNS)
			ratio = fmt.Sprintf("%.2fx", float64(ip.WallNS)/float64(p.WallNS)) // above 1: devbulk faster, as in the comparisons
		}
		cells = append(cells, ipWall, ratio)
	}
	return cells
}

// notes are the lines under the table: overruns, RCU counts, the netns
// drain and the errors of every phase.
func (r *Report) notes() []string {
	var notes []string
	if slices.ContainsFunc(r.Runs, func(c Cycle) bool { return c.BystanderPaused }) {
		notes = append(notes, "† the bystander paused for this cycle (--bystander-influence): the same work without the prober")
	}
	for _, c := range r.Runs {
		for _, p := range c.Phases() {
			if p.Overruns > 0 {
				notes = append(notes, fmt.Sprintf("N=%d %s %s: %d receive-buffer overruns, %d ACKs lost (settled by lookup)", c.Count, p.Name, p.Strategy, p.Overruns, p.AcksLost))
			}
			if p.RCU != nil {
				notes = append(notes, fmt.Sprintf("N=%d %s %s: %s", c.Count, p.Name, p.Strategy, rcuLine(p)))
			}
			if m := p.KernelMem; m != nil {
				notes = append(notes, kmemNote(c.Count, p.Name, m))
			}
			if w := p.WaitNote(); w != "" && p.Tool == "devbulk" {
				notes = append(notes, fmt.Sprintf("N=%d %s %s: %s", c.Count, p.Name, p.Strategy, w))
			}
			if p.DrainMethod != "" {
				notes = append(notes, fmt.Sprintf("N=%d netns: release returned after %s; kernel finished after %s", c.Count, result.FormatNS(p.ReleaseNS), result.FormatNS(p.DrainNS)))
			}
			for _, e := range p.Errors {
				notes = append(notes, fmt.Sprintf("N=%d %s %s %s: %s", c.Count, p.Tool, p.Name, p.Strategy, e))
			}
		}
	}
	return notes
}

func hasNetns(r *Report) bool {
	for _, c := range r.Runs {
		if c.Delete.DrainMethod != "" {
			return true
		}
	}
	return false
}

// rcuLine prints a phase's RCU counts per device and per unregister call.
func rcuLine(p *Phase) string {
	batches := p.RCU[rcutrace.Batches]
	parts := []string{fmt.Sprintf("%d unregister calls", batches)}
	for _, fn := range rcutrace.Functions {
		n := p.RCU[fn]
		s := fmt.Sprintf("%s %d (%.2f/device", fn, n, float64(n)/float64(max(1, p.Devices)))
		if batches > 0 {
			s += fmt.Sprintf(", %.1f/call", float64(n)/float64(batches))
		}
		parts = append(parts, s+")")
	}
	return strings.Join(parts, "; ")
}

// kmemNote is the line under the table on what a phase cost the kernel in
// memory, and its figure per device or why there is none.
func kmemNote(n int, phase string, m *KernelMem) string {
	per := fmt.Sprintf("%.1f KiB per device", m.PerDeviceKiB)
	if m.Withheld != "" {
		per = "no figure per device: " + m.Withheld
	}
	return fmt.Sprintf("N=%d %s: kernel memory %+d KiB by %s (meminfo: slab %+d reclaimable, %+d unreclaimable; percpu %+d; vmalloc %+d), %s; MemAvailable %+d KiB (the whole machine's counters)",
		n, phase, m.DevicesKiB, m.Method, m.SlabReclaimableKiB, m.SlabUnreclaimableKiB, m.PercpuKiB, m.VmallocKiB, per, m.MemAvailableKiB)
}
