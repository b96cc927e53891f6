package check

import (
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/devbulk/devbulk"
	"github.com/devbulk/devbulk/bench"
	"github.com/devbulk/devbulk/bystander"
	"github.com/devbulk/devbulk/kernlog"
	"github.com/devbulk/devbulk/netnsbench"
)

// Results is the document of one check: what ran where, and every
// measurement. `devbulk check --save` writes it; --baseline reads it back.
type Results struct {
	Meta      Meta       `json:"meta"`
	Scenarios []Scenario `json:"scenarios"`
}

// Meta describes the machine, kernel and tool of a check.
type Meta struct {
	devbulk.Header
	// KernelConfigSHA256 is the hash of the running kernel's configuration
	// (/proc/config.gz, else /boot/config-RELEASE); empty when unreadable.
	KernelConfigSHA256 string `json:"kernel_config_sha256,omitempty"`
	CPUModel           string `json:"cpu_model,omitempty"`
	Suite              string `json:"suite"`
	// Label names the kernel configuration of a matrix column
	// ("debian:6.1 rcu_nocbs=all"): benchstat's kernel key.
	Label string `json:"label,omitempty"`
}

// Scenario is the outcome of one scenario of the suite.
type Scenario struct {
	Name string `json:"name"`
	// Kernel is the release it ran on, when not the document's (the VM's).
	Kernel string `json:"kernel,omitempty"`
	// Skip says why the scenario could not run here (a kind this kernel
	// lacks, no VM); Error why it failed.
	Skip  string `json:"skip,omitempty"`
	Error string `json:"error,omitempty"`
	Lines []Line `json:"lines,omitempty"`
	// Findings are the kernel's complaints while the scenario ran, each
	// with its phase: a scenario with any fails.
	Findings []kernlog.Finding `json:"findings,omitempty"`
	// KernelLog is how the kernel's log was read while the scenario ran
	// (nil: not known, a document of a devbulk that did not read it).
	KernelLog *LogRead `json:"kernel_log,omitempty"`
}

// LogRead is how the kernel's log was read during a scenario.
type LogRead struct {
	Records int `json:"records"`
	// Unread says why it was not read ("" when it was).
	Unread string `json:"unread,omitempty"`
}

// Line is one repetition of one benchmark, as a line of the Go benchmark
// format: Name without its "Benchmark" prefix, iterations, values.
type Line struct {
	Name   string  `json:"name"`
	Iters  int     `json:"iters"`
	Values []Value `json:"values"`
}

// Value is one measured value and its unit.
type Value struct {
	Value float64 `json:"value"`
	Unit  string  `json:"unit"`
}

// newMeta describes this machine and kernel now.
func newMeta(suite string) Meta { return MetaFor(devbulk.NewHeader(), suite) }

// MetaFor completes a result document's header (made on this machine).
func MetaFor(h devbulk.Header, suite string) Meta {
	return Meta{Header: h, KernelConfigSHA256: kernelConfigHash(), CPUModel: cpuModel(), Suite: suite}
}

func kernelConfigHash() string {
	h := sha256.New()
	if f, err := os.Open("/proc/config.gz"); err == nil {
		defer f.Close()
		if z, err := gzip.NewReader(f); err == nil {
			if _, err := io.Copy(h, z); err == nil {
				return hex.EncodeToString(h.Sum(nil))
			}
		}
		h.Reset()
	}
	var u unix.Utsname
	_ = unix.Uname(&u)
	b, err := os.ReadFile("/boot/config-" + unix.ByteSliceToString(u.Release[:]))
	if err != nil {
		return ""
	}
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))
}

func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if k, v, ok := strings.Cut(s.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// Units: per-operation time (an operation is one device, or one namespace)
// is what checks compare; the rates beside it are its inverse, for people.
const (
	UnitNsPerOp   = "ns/op"
	UnitDevPerSec = "dev/s"
	UnitNsPerSec  = "netns/s"
	// UnitKernelKiB is the kernel memory a created device holds (see
	// bench.KernelMem).
	UnitKernelKiB = "kernel-KiB/device"
)

// BenchLines turns a bench report into benchmark lines, one per phase and
// cycle: Create/... and Delete/... with kind, strategy and count, ns per
// device and devices per second.
func BenchLines(r *bench.Report) []Line {
	var out []Line
	if b := r.BystanderIdle; b != nil && b.Ops > 0 {
		out = append(out, bystanderLine(b, "phase=idle/kind="+r.Kind))
	}
	for _, c := range r.Runs {
		if c.BystanderPaused { // the same benchmarks without the prober: not mixed in
			continue
		}
		for _, p := range c.Phases() {
			if p.Devices == 0 || p.WallNS <= 0 || p.Failed > 0 {
				continue
			}
			strategy := p.Strategy
			if p.Tool == "iproute2" {
				strategy = "iproute2-" + strategy
			}
			kind := r.Kind
			if c.Move != nil && p.Name == "delete" { // where the links were moved: not the same work
				kind += "/move=" + nameValue(c.Move.Strategy)
			}
			if c.Namespaces > 0 { // spread over K namespaces at once: not the same work either
				kind += fmt.Sprintf("/ns=%d", c.Namespaces)
			}
			name := fmt.Sprintf("%s/kind=%s/strategy=%s/n=%d", title(p.Name), kind, nameValue(strategy), c.Count)
			values := []Value{{float64(p.WallNS) / float64(p.Devices), UnitNsPerOp}, {p.DevicesPerSec, UnitDevPerSec}}
			if p.KernelMem != nil && p.KernelMem.Withheld == "" {
				values = append(values, Value{p.KernelMem.PerDeviceKiB, UnitKernelKiB})
			}
			out = append(out, Line{Name: name, Iters: p.Devices, Values: values})
			if b := p.Bystander; b != nil && b.Ops > 0 {
				out = append(out, bystanderLine(b, fmt.Sprintf("phase=%s-%s/kind=%s/n=%d", p.Name, nameValue(strategy), kind, c.Count)))
			}
			// The profile's components, per device, so that a check
			// compares where the time goes across kernels too: all of
			// them (a dozen or two), so that every repetition has the
			// same benchmarks whatever their order. A create phase's
			// strategy is named create-S, and a move's move-S: pipelined
			// is a delete strategy too.
			if p.Name != "delete" {
				strategy = p.Name + "-" + strategy
			}
			for _, e := range p.Profile {
				out = append(out, Line{Name: fmt.Sprintf("Profile/kind=%s/strategy=%s/n=%d/fn=%s", r.Kind, nameValue(strategy), c.Count, nameValue(e.Function)),
					Iters: p.Devices, Values: []Value{{float64(e.TotalNS) / float64(p.Devices), UnitNsPerOp}}})
			}
		}
	}
	return out
}

// netnsLines turns a netns report into benchmark lines: the creation
// (ns per namespace, namespaces per second) and, where it was seen, the
// drain (one operation).
func netnsLines(r *netnsbench.Report) []Line {
	var out []Line
	for _, run := range r.Runs {
		if run.Namespaces == 0 || run.CreateNS <= 0 {
			continue
		}
		base := "Netns" + title(r.Scenario)
		params := fmt.Sprintf("/mode=%s/payload=%s/workers=%d/n=%d", run.Mode, nameValue(run.Payload), run.Workers, run.Namespaces)
		out = append(out, Line{Name: base + params, Iters: run.Namespaces, Values: []Value{
			{float64(run.CreateNS) / float64(run.Namespaces), UnitNsPerOp}, {run.NetnsPerSec, UnitNsPerSec}}})
		if run.DrainMethod != "" {
			out = append(out, Line{Name: base + "Drain" + params, Iters: 1, Values: []Value{{float64(run.DrainNS), UnitNsPerOp}}})
		}
		if run.ExecNS > 0 { // the exec step, per namespace
			out = append(out, Line{Name: base + "Exec" + params, Iters: run.Namespaces, Values: []Value{
				{float64(run.ExecNS) / float64(run.Namespaces), UnitNsPerOp}, {run.ExecPerSec, UnitNsPerSec}}})
		}
	}
	return out
}

func title(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

var notNameValue = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^A-Za-z0-9_.:+-]+`) })

// nameValue keeps a value usable inside a benchmark name: no spaces, no
// slashes, no '='.
func nameValue(s string) string { return notNameValue().ReplaceAllString(s, "_") }

// bystanderLine is what a bystander waited during a phase (params name
// it): its p99 as the ns/op a check compares and gates, then its p50,
// max and longest stall.
func bystanderLine(b *bystander.Stats, params string) Line {
	return Line{Name: fmt.Sprintf("Bystander/op=%s/%s", b.Op, params), Iters: b.Ops, Values: []Value{
		{float64(b.P99), UnitNsPerOp}, {float64(b.P50), "p50-ns"}, {float64(b.Max), "max-ns"}, {float64(b.LongestStall), "stall-ns"}}}
}
