package check

import (
	"github.com/devbulk/devbulk/kernlog"

	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"golang.org/x/perf/benchfmt"

	"github.com/devbulk/devbulk/internal/result"
)

// WriteTable prints the check for people: one row per benchmark, the
// medians with their 95% interval, the change, p and the verdict.
func (c *Report) WriteTable(w io.Writer) error {
	m := c.Current.Meta
	fmt.Fprintf(w, "devbulk %s  suite %s  %s  %s\n", m.Version, m.Suite, m.Machine(), m.CPUModel)
	if c.Baseline != nil {
		fmt.Fprintf(w, "baseline: kernel %s, %s, %s; threshold %g%%\n", c.Baseline.Kernel, c.Baseline.CPUModel, c.Baseline.Date, c.Threshold)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "scenario\tbenchmark\tbaseline\tcurrent\tdelta\tp\tverdict")
	for _, s := range c.Scenarios {
		switch {
		case s.Skip != "":
			fmt.Fprintf(tw, "%s\t-\t\t\t\t\tSKIP: %s\n", s.Name, oneLine(s.Skip))
			continue
		case s.Error != "":
			fmt.Fprintf(tw, "%s\t-\t\t\t\t\tFAILED: %s\n", s.Name, oneLine(s.Error))
		}
		for _, f := range s.Findings {
			fmt.Fprintf(tw, "%s\t-\t\t\t\t\tKERNEL: %s\n", s.Name, Complaint(f))
		}
		for _, cmp := range s.Comparisons {
			delta, p := "", ""
			if cmp.Base != nil && cmp.Cur != nil {
				delta, p = fmt.Sprintf("%+.1f%%", cmp.DeltaPct), fmt.Sprintf("%.3f", cmp.P)
				if cmp.Verdict == Same && cmp.P >= cmp.Alpha {
					delta = "~"
				}
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", s.Name, cmp.Benchmark, cell(cmp.Base), cell(cmp.Cur), delta, p, cmp.Verdict)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\nper device (or namespace; Drain: per run): median ± 95%% interval (n); "+
		"regression = slower with p < 0.05 (Mann-Whitney U), the interval of the change excluding 0, and by more than the threshold\n")
	if err == nil {
		_, err = fmt.Fprintln(w, c.Current.kernelLog())
	}
	return err
}

// kernelLog says in one line what the kernel complained of while the
// scenarios ran, or that it did not, and where its log was not read.
func (r *Results) kernelLog() string {
	complaints, in, ran := 0, 0, 0
	var unread, unknown []string
	for _, s := range r.Scenarios {
		if s.Skip != "" || s.Error != "" && len(s.Lines) == 0 {
			continue
		}
		ran++
		switch {
		case s.KernelLog == nil:
			unknown = append(unknown, s.Name)
		case s.KernelLog.Unread != "":
			unread = append(unread, s.Name+" ("+s.KernelLog.Unread+")")
		}
		if len(s.Findings) > 0 {
			complaints += len(s.Findings)
			in++
		}
	}
	line := "kernel log: no complaint while the scenarios ran"
	switch {
	case ran == 0:
		return "kernel log: no scenario ran"
	case complaints > 0:
		line = fmt.Sprintf("kernel log: %d complaints in %d of %d scenarios (KERNEL rows above; each report in the results' findings)", complaints, in, ran)
	}
	if len(unread) > 0 {
		line += "; not read during " + strings.Join(unread, ", ")
	}
	switch {
	case ran > 0 && len(unknown) == ran:
		return "kernel log: not known (these results do not say what the kernel complained of)"
	case len(unknown) > 0:
		line += "; not known for " + strings.Join(unknown, ", ")
	}
	return line
}

func cell(s *Summary) string {
	if s == nil {
		return "-"
	}
	if r, ok := s.Range(); ok {
		return fmt.Sprintf("%s ±%.0f%% (%d)", result.FormatNS(int64(s.Median)), r, s.N)
	}
	return fmt.Sprintf("%s (%d: too few for an interval)", result.FormatNS(int64(s.Median)), s.N)
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// WriteKTAP prints the check as KTAP version 1, one test per scenario,
// with each benchmark as `# key=value` diagnostics before its result line,
// for kselftest runners. ExitCode gives the matching exit status.
func (c *Report) WriteKTAP(w io.Writer) error {
	m := c.Current.Meta
	fmt.Fprintln(w, "KTAP version 1")
	fmt.Fprintf(w, "# devbulk=%s suite=%s kernel=%s cpus=%d mem_kib=%d accel=%s threshold_pct=%g\n", m.Version, m.Suite, m.Kernel, m.CPUs, m.MemKiB, orNone(m.Accel), c.Threshold)
	return c.writeKTAPTests(w, "")
}

// writeKTAPTests writes the plan, the scenarios' results and the totals,
// each line after indent (a matrix nests one such list per kernel).
func (c *Report) writeKTAPTests(w io.Writer, indent string) error {
	if c.Baseline != nil {
		fmt.Fprintf(w, "%s# baseline_kernel=%s baseline_date=%s\n", indent, c.Baseline.Kernel, c.Baseline.Date)
	}
	fmt.Fprintf(w, "%s1..%d\n", indent, len(c.Scenarios))
	for i, s := range c.Scenarios {
		for _, cmp := range s.Comparisons {
			fmt.Fprintf(w, "%s# %s benchmark=%s unit=%s", indent, s.Name, cmp.Benchmark, cmp.Unit)
			if cmp.Base != nil {
				fmt.Fprintf(w, " baseline=%.0f", cmp.Base.Median)
			}
			if cmp.Cur != nil {
				fmt.Fprintf(w, " current=%.0f n=%d", cmp.Cur.Median, cmp.Cur.N)
			}
			if cmp.Base != nil && cmp.Cur != nil {
				fmt.Fprintf(w, " delta_pct=%+.1f p=%.3f", cmp.DeltaPct, cmp.P)
			}
			if cmp.Verdict != "" {
				fmt.Fprintf(w, " verdict=%s", cmp.Verdict)
			}
			fmt.Fprintln(w)
		}
		switch {
		case s.Skip != "":
			fmt.Fprintf(w, "%sok %d %s # SKIP %s\n", indent, i+1, s.Name, oneLine(s.Skip))
		case s.Failed():
			if s.Error != "" {
				fmt.Fprintf(w, "%s# %s error=%q\n", indent, s.Name, oneLine(s.Error))
			}
			for _, f := range s.Findings {
				fmt.Fprintf(w, "%s# %s kernel=%q\n", indent, s.Name, Complaint(f))
			}
			fmt.Fprintf(w, "%snot ok %d %s\n", indent, i+1, s.Name)
		default:
			fmt.Fprintf(w, "%sok %d %s\n", indent, i+1, s.Name)
		}
	}
	pass, fail, skip := c.counts()
	_, err := fmt.Fprintf(w, "%s# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:%d error:0\n", indent, pass, fail, skip)
	return err
}

func (c *Report) counts() (pass, fail, skip int) {
	for i := range c.Scenarios {
		switch s := &c.Scenarios[i]; {
		case s.Skip != "":
			skip++
		case s.Failed():
			fail++
		default:
			pass++
		}
	}
	return
}

// Exit statuses, as kselftest has them.
const (
	ExitPass = 0
	ExitFail = 1
	ExitSkip = 4
)

// ExitCode is the kselftest exit status of the check: 1 when a scenario
// failed, 4 when none could run, else 0.
func (c *Report) ExitCode() int {
	switch {
	case c.Failed():
		return ExitFail
	case c.AllSkipped():
		return ExitSkip
	}
	return ExitPass
}

// GitBisect is the check's outcome as `git bisect run` reads an exit
// status: 1 (bad) when a benchmark regressed, 125 (cannot test: skip this
// commit) when a scenario failed, went missing or could not run, else 0
// (good).
func (c *Report) GitBisect() int {
	cannot := c.AllSkipped()
	for _, s := range c.Scenarios {
		for _, cmp := range s.Comparisons {
			if cmp.Verdict == Regression {
				return 1
			}
			cannot = cannot || cmp.Verdict == Missing
		}
		cannot = cannot || s.Error != ""
	}
	if cannot {
		return 125
	}
	return 0
}

// WriteBenchstat writes results in the Go benchmark format, which
// `benchstat old.txt new.txt` compares. The kernel, the date and the CPU
// are in a comment line, not in configuration lines (benchstat splits
// tables on any configuration that differs), so that two kernels' files, a
// VM's and a host's too, compare in one table; with kernelKey (several
// results in one stream), each result's lines carry a kernel: key, which
// `benchstat -col kernel` makes the columns.
func WriteBenchstat(w io.Writer, kernelKey bool, results ...*Results) error {
	bw := benchfmt.NewWriter(w)
	for _, u := range []struct{ unit, better string }{{UnitNsPerOp, "lower"}, {UnitDevPerSec, "higher"}, {UnitNsPerSec, "higher"}, {UnitKernelKiB, "lower"}} {
		if err := bw.Write(&benchfmt.UnitMetadata{UnitMetadataKey: benchfmt.UnitMetadataKey{Unit: u.unit, Key: "better"}, OrigUnit: u.unit, Value: u.better}); err != nil {
			return err
		}
	}
	for _, r := range results {
		m := r.Meta
		fmt.Fprintf(w, "devbulk %s on kernel %s, %d CPUs (%s), %d KiB, %s; kernel command line: %s\n", m.Version, m.Kernel, m.CPUs, m.CPUModel, m.MemKiB, m.Date, m.Cmdline)
		// File configuration (File: true) is what the writer prints as
		// "key: value" lines; SetConfig would make it internal, unwritten.
		config := func(key, value string) benchfmt.Config {
			return benchfmt.Config{Key: key, Value: []byte(value), File: true}
		}
		res := &benchfmt.Result{Config: []benchfmt.Config{config("goos", "linux")}}
		if m.Accel != "" { // TCG's and KVM's times (and a host's) are not to be compared
			res.Config = append(res.Config, config("accel", m.Accel))
		}
		if kernelKey {
			key := m.Label // a configuration: one release can run with several command lines
			if key == "" {
				key = m.Kernel
			}
			res.Config = append(res.Config, config("kernel", key))
		}
		for _, s := range r.Scenarios {
			for _, l := range s.Lines {
				res.Name = benchfmt.Name(l.Name)
				res.Iters = l.Iters
				res.Values = res.Values[:0]
				for _, v := range l.Values {
					res.Values = append(res.Values, benchfmt.Value{Value: v.Value, Unit: v.Unit})
				}
				if err := bw.Write(res); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// orNone is v, or "none" where a KTAP diagnostic needs a value.
func orNone(v string) string {
	if v == "" {
		return "none"
	}
	return v
}

// Complaint is one line for a finding: its class, its phase and the
// kernel's first line (the report is in the JSON document).
func Complaint(f kernlog.Finding) string {
	return fmt.Sprintf("%s during %s: %s", f.Class, f.Phase, oneLine(f.Title()))
}
