package batch

import (
	"fmt"
	"github.com/devbulk/devbulk"
	"io"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/devbulk/devbulk/rcutrace"
	"golang.org/x/sys/unix"
)

// Report is the result document of a bench: stable field names, documented
// in the README. Durations are integer nanoseconds.
type Report struct {
	Header
	Kind string  `json:"kind"`
	Up   bool    `json:"up"`
	Runs []Cycle `json:"runs"`
	// MaxRSSKiB is devbulk's peak resident memory over the whole bench.
	MaxRSSKiB int64 `json:"max_rss_kib"`
}

// Cycle is one create→delete cycle of Count links.
type Cycle struct {
	Count  int   `json:"count"`
	Repeat int   `json:"repeat"` // 1-based
	Create Phase `json:"create"`
	Delete Phase `json:"delete"`
	// IPCreate and IPDelete are the same work done by iproute2 (--compare).
	IPCreate *Phase `json:"iproute2_create,omitempty"`
	IPDelete *Phase `json:"iproute2_delete,omitempty"`
}

// Header is what every devbulk result document starts with: which tool,
// which kernel, how many CPUs, when.
type Header struct {
	Tool    string `json:"tool"`
	Version string `json:"version"`
	Kernel  string `json:"kernel"`
	CPUs    int    `json:"cpus"`
	Date    string `json:"date"`
}

// NewHeader describes this machine and run now.
func NewHeader() Header {
	var u unix.Utsname
	_ = unix.Uname(&u)
	return Header{Tool: "devbulk", Version: devbulk.Version(), Kernel: unix.ByteSliceToString(u.Release[:]),
		CPUs: runtime.NumCPU(), Date: time.Now().UTC().Format(time.RFC3339)}
}

func newReport(kind string, up bool) *Report {
	return &Report{Header: NewHeader(), Kind: kind, Up: up}
}

// WriteTable prints the report for people.
func (r *Report) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "devbulk %s  kernel %s  %d CPUs  kind %s%s\n\n", r.Version, r.Kernel, r.CPUs, r.Kind,
		map[bool]string{true: " (up)", false: ""}[r.Up])
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "N\trep\tphase\tstrategy\twall\tms/dev\tdev/s\tuser\tsys\tp50\tp99\tmax\tiproute2\tdevbulk/ip\t")
	for _, c := range r.Runs {
		for _, pp := range [][2]*Phase{{&c.Create, c.IPCreate}, {&c.Delete, c.IPDelete}} {
			p, ip := pp[0], pp[1]
			lat := []string{"-", "-", "-"}
			if p.Requests != nil {
				lat = []string{FormatNS(p.Requests.P50), FormatNS(p.Requests.P99), FormatNS(p.Requests.Max)}
			}
			ipWall, ratio := "-", "-"
			if ip != nil && ip.WallNS > 0 {
				ipWall = FormatNS(ip.WallNS)
				ratio = fmt.Sprintf("%.2fx", float64(p.WallNS)/float64(ip.WallNS))
			}
			strategy := p.Strategy
			if p.Module != "" {
				strategy += " (" + p.Module + ")"
			}
			fmt.Fprintf(tw, "%d\t%d\t%s\t%s\t%s\t%.3f\t%.0f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n",
				c.Count, c.Repeat, p.Phase, strategy, FormatNS(p.WallNS), p.MsPerDevice, p.DevicesPerSec,
				FormatNS(p.UserNS), FormatNS(p.SysNS), lat[0], lat[1], lat[2], ipWall, ratio)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var notes []string
	for _, c := range r.Runs {
		for _, p := range []*Phase{&c.Create, &c.Delete, c.IPCreate, c.IPDelete} {
			if p == nil {
				continue
			}
			if p.Overruns > 0 {
				notes = append(notes, fmt.Sprintf("N=%d %s %s: %d receive-buffer overruns, %d ACKs lost (settled by lookup)", c.Count, p.Phase, p.Strategy, p.Overruns, p.AcksLost))
			}
			if p.RCU != nil {
				notes = append(notes, fmt.Sprintf("N=%d %s %s: %s", c.Count, p.Phase, p.Strategy, rcuLine(p)))
			}
			if p.DrainMethod != "" {
				notes = append(notes, fmt.Sprintf("N=%d netns: release returned after %s; kernel finished after %s", c.Count, FormatNS(p.ReleaseNS), FormatNS(p.DrainNS)))
			}
			for _, e := range p.Errors {
				notes = append(notes, fmt.Sprintf("N=%d %s %s %s: %s", c.Count, p.Tool, p.Phase, p.Strategy, e))
			}
		}
	}
	if len(notes) > 0 {
		fmt.Fprintf(w, "\n%s\n", strings.Join(notes, "\n"))
	}
	if hasNetns(r) {
		fmt.Fprintf(w, "\nnetns wall = until the kernel freed the namespace: %s\n", DrainMethod)
	}
	return nil
}

func hasNetns(r *Report) bool {
	for _, c := range r.Runs {
		if c.Delete.DrainMethod != "" {
			return true
		}
	}
	return false
}

// FormatNS prints nanoseconds compactly, with 3 significant digits.
func FormatNS(ns int64) string {
	d := time.Duration(ns)
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.3gs", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.3gms", float64(d)/1e6)
	default:
		return fmt.Sprintf("%.3gµs", float64(d)/1e3)
	}
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
