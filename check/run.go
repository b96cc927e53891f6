package check

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"

	"github.com/devbulk/devbulk"

	"github.com/devbulk/devbulk/bench"
	"github.com/devbulk/devbulk/kernlog"
	"github.com/devbulk/devbulk/netnsbench"
	"github.com/devbulk/devbulk/vm"
)

// RunOptions say where a suite runs.
type RunOptions struct {
	// VM is the kernel for the scenarios marked vm; nil skips them with
	// VMUnavailable as the reason.
	VM            *vm.Kernel
	VMUnavailable string
	// AllInVM runs every scenario in the VM (a cross-kernel check).
	AllInVM bool
	// Here runs every scenario on this kernel, those marked vm too: in a
	// fleet's guest, which is the kernel under test.
	Here bool
	// Label names the kernel configuration in the results (Meta.Label).
	Label string
	// SkipUnbootable skips the VM's scenarios, with the reason, when its
	// kernel does not boot, instead of failing them (a matrix: the other
	// kernels still count).
	SkipUnbootable bool
	// Progress, when set, receives one line per scenario and repetition;
	// Counter makes progress bars (see bench.Options).
	Progress func(string)
	Counter  func(label string, total int) func(done int)
	// KernelNoise is the list of the kernel's complaints not reported
	// (kernlog.ReadNoise); every other one fails its scenario.
	KernelNoise kernlog.Noise
	// MountDir is where netns create scenarios keep their namespaces
	// (see netnsbench.KeepOptions).
	MountDir string
}

// Run runs the suite: the VM scenarios in one VM (a single boot), the
// others here. A scenario that fails (or whose VM failed) is recorded with
// its error and the suite goes on; Run itself fails only when ctx ends.
func Run(ctx context.Context, s *Suite, o RunOptions) (*Results, error) {
	r := &Results{Meta: newMeta(s.Name)}
	r.Meta.Label = o.Label
	defer r.order(s)
	var inVM []ScenarioSpec
	left := newCountdown(PlanRun(s, o))
	for _, sc := range s.Scenarios {
		if runsInVM(sc, o) {
			inVM = append(inVM, sc)
			continue
		}
		left.next(sc, o.Progress)
		res := runHere(ctx, sc, o)
		r.Scenarios = append(r.Scenarios, res)
		if ctx.Err() != nil {
			return r, ctx.Err()
		}
	}
	if len(inVM) == 0 {
		return r, nil
	}
	if o.VM == nil {
		for _, sc := range inVM {
			r.Scenarios = append(r.Scenarios, Scenario{Name: sc.Name, Skip: o.VMUnavailable})
		}
		return r, nil
	}
	guest, err := runInVM(ctx, &Suite{Name: s.Name, Scenarios: inVM}, o)
	if errors.Is(err, vm.ErrNoBoot) && ctx.Err() == nil {
		// Under TCG on a loaded host a kernel that boots can panic early
		// now and then ("IO-APIC + timer doesn't work!"): once more before
		// calling it unbootable.
		guest, err = runInVM(ctx, &Suite{Name: s.Name, Scenarios: inVM}, o)
	}
	if ctx.Err() != nil {
		return r, ctx.Err()
	}
	if err != nil { // the VM's scenarios fail (or skip); the others stand
		for _, sc := range inVM {
			if o.SkipUnbootable && errors.Is(err, vm.ErrNoBoot) {
				r.Scenarios = append(r.Scenarios, Scenario{Name: sc.Name, Skip: err.Error()})
			} else {
				r.Scenarios = append(r.Scenarios, Scenario{Name: sc.Name, Error: err.Error()})
			}
		}
		return r, nil
	}
	for _, sc := range guest.Scenarios {
		sc.Kernel = guest.Meta.Kernel
		r.Scenarios = append(r.Scenarios, sc)
	}
	if o.AllInVM {
		r.Meta = guest.Meta
		r.Meta.Suite, r.Meta.Label = s.Name, o.Label
	}
	return r, nil
}

// runsInVM reports whether Run takes sc to the VM: a vm scenario, or any
// in a cross-kernel check, unless it runs here (a fleet's guest, --here).
func runsInVM(sc ScenarioSpec, o RunOptions) bool {
	return (sc.VM || o.AllInVM) && !vm.IsGuest() && !o.Here
}

// order puts the scenarios in the suite's order (the VM's ran last).
func (r *Results) order(s *Suite) {
	pos := map[string]int{}
	for i, sc := range s.Scenarios {
		pos[sc.Name] = i
	}
	sort.SliceStable(r.Scenarios, func(i, j int) bool { return pos[r.Scenarios[i].Name] < pos[r.Scenarios[j].Name] })
}

// runHere runs one scenario on this kernel, Repeat times, with what the
// kernel complained of meanwhile.
func runHere(ctx context.Context, sc ScenarioSpec, o RunOptions) Scenario {
	res := Scenario{Name: sc.Name}
	var err error
	var log *kernlog.Summary
	switch {
	case sc.Bench != nil:
		res.Lines, res.Skip, log, err = runBench(ctx, sc, o)
	default:
		w := kernlog.Watch(o.KernelNoise)
		w.Phase("netns " + string(sc.Netns.Scenario))
		res.Lines, err = runNetns(ctx, sc, o)
		s := w.Stop()
		log = &s
	}
	if errors.Is(err, devbulk.ErrNotSupported) {
		res.Skip, err = err.Error(), nil
	}
	if err != nil {
		res.Error = err.Error()
	}
	if log != nil {
		res.Findings, res.KernelLog = log.Findings, &LogRead{Records: log.Records, Unread: log.Unread}
	}
	return res
}

func runBench(ctx context.Context, sc ScenarioSpec, ro RunOptions) ([]Line, string, *kernlog.Summary, error) {
	o, err := sc.Bench.options()
	if err != nil {
		return nil, "", nil, err
	}
	if err := o.Resolve(); errors.Is(err, devbulk.ErrNotSupported) {
		return nil, err.Error(), nil, nil
	} else if err != nil {
		return nil, "", nil, err
	}
	o.Repeat = sc.Repeat
	if ro.Progress != nil {
		o.Progress = func(s string) { ro.Progress(sc.Name + ": " + s) }
	}
	o.Counter, o.KernelNoise = ro.Counter, ro.KernelNoise
	rep, err := bench.Run(ctx, o)
	if rep == nil {
		return nil, "", nil, err
	}
	return BenchLines(rep), "", rep.KernelLog, err
}

func runNetns(ctx context.Context, sc ScenarioSpec, ro RunOptions) ([]Line, error) {
	n := sc.Netns
	var lines []Line
	for rep := 1; rep <= sc.Repeat; rep++ {
		if ro.Progress != nil {
			ro.Progress(fmt.Sprintf("%s: netns %s rep %d/%d", sc.Name, n.Scenario, rep, sc.Repeat))
		}
		run, err := n.prepared()
		var r *netnsbench.Report
		if err == nil {
			r, err = run.measure(ctx, ro)
		}
		if err != nil {
			return lines, err
		}
		lines = append(lines, netnsLines(r)...)
	}
	return lines, nil
}

// guestSuitePath is where the VM finds the suite it runs, guestNoisePath
// the kernel's complaints it does not report.
const (
	guestSuitePath = "/suite.json"
	guestNoisePath = "/kernel-noise.txt"
)

// runInVM boots one VM that runs `devbulk check` on the scenarios and
// returns its results document.
func runInVM(ctx context.Context, s *Suite, o RunOptions) (*Results, error) {
	js, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	modules := netnsbench.GuestModules()
	if o.Progress != nil {
		o.Progress(fmt.Sprintf("booting %s for %d scenarios (about %s)", o.VM.Describe(), len(s.Scenarios), Rough(PlanRun(s, o).VMTime)))
	}
	var stdout, stderr bytes.Buffer
	cfg := vm.Config{Kernel: o.VM, Modules: modules, Files: map[string][]byte{guestSuitePath: js}}
	args := []string{"check", "--suite", guestSuitePath, "--format", "json", "--quiet"}
	if o.KernelNoise != nil { // else the guest's devbulk has the same list
		cfg.Files[guestNoisePath] = []byte(o.KernelNoise.String())
		args = append(args, "--kernel-noise", guestNoisePath)
	}
	code, err := vm.Run(ctx, cfg, args, &stdout, &stderr)
	if err != nil {
		return nil, fmt.Errorf("VM on %s: %w", o.VM.Label(), err)
	}
	var c Report
	if err := json.Unmarshal(stdout.Bytes(), &c); err != nil || c.Current == nil {
		return nil, fmt.Errorf("VM on %s: exit %d, no results (%v): %s", o.VM.Label(), code, err, tail(stderr.String()))
	}
	return c.Current, nil
}

// ReadResults reads a results document (a baseline).
func ReadResults(rd io.Reader) (*Results, error) {
	var r Results
	dec := json.NewDecoder(rd)
	if err := dec.Decode(&r); err != nil {
		return nil, err
	}
	if r.Meta.Tool != "devbulk" {
		return nil, errors.New("not a devbulk check results document (check --save makes those; no meta.tool \"devbulk\")")
	}
	return &r, nil
}

func tail(s string) string {
	if len(s) > 2000 {
		return "…" + s[len(s)-2000:]
	}
	return s
}
