package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/devbulk/devbulk"

	"github.com/urfave/cli/v2"

	"github.com/devbulk/devbulk/check"
	"github.com/devbulk/devbulk/kbuild"
	"github.com/devbulk/devbulk/lava"
	"github.com/devbulk/devbulk/vm"
)

var checkFormats = []string{"table", "json", "ktap", "benchstat", "lava"}

func checkCommand() *cli.Command {
	return &cli.Command{
		Name:  "check",
		Usage: "run a suite of scenarios, save it as a baseline, or compare it with one: exit 1 on a significant regression",
		Description: "Without --suite, devbulk's quick suite runs (see --print-suite): ifb, veth and the netns scenarios on this\n" +
			"kernel, in under a minute. --vm runs devbulk's full suite, whose focus kinds (dummy, vlan, ipip, gre) boot a VM on\n" +
			"Debian's kernel (about 9 minutes under TCG); with --suite, a scenario marked vm runs only with --vm (else it is\n" +
			"skipped, said as such). Before a run, devbulk says what will run and about how long it takes; while it runs, the\n" +
			"time left. Each benchmark is compared with the baseline by the\n" +
			"Mann-Whitney U test (benchstat's): a regression is slower with p < 0.05 and by more than --threshold.\n" +
			"--vm-kernel A --vm-kernel B [...] (up to 8) runs the whole suite in the VM on each kernel configuration, one boot\n" +
			"each, and compares each with A in one table, a column per configuration.\n" +
			"--format lava is for a LAVA job's test shell (devbulk lava job): the table, a test case per scenario and sample, and\n" +
			"the results document, which check --results reads back from the job's log.\n" +
			"Exit codes as kselftest: 0 pass, 1 a scenario failed or regressed, 4 nothing could run; 2 bad input.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "suite", Usage: "the suite: `FILE` (JSON), or devbulk's quick, full or hunt (the teardown paths for a debug kernel's findings, docs/findings.md; default: quick, or with --vm full)"},
			&cli.BoolFlag{Name: "vm", Usage: "run the suite's vm scenarios in a VM on Debian's cloud kernel (one boot); without --suite, devbulk's full suite"},
			&cli.BoolFlag{Name: "print-suite", Usage: "print the suite devbulk would run (quick, or with --vm full), to start one of yours from, and exit"},
			&cli.StringFlag{Name: "save", Usage: "write the results to `FILE`, a baseline for later checks"},
			&cli.StringFlag{Name: "baseline", Usage: "compare with the results in `FILE` (from --save)"},
			&cli.StringSliceFlag{Name: "results", Usage: "print the results in `FILE` instead of running the suite: a run saved with --save, the log of a LAVA job " +
				"(lava-run's) or a LAVA server's results export (lavacli results JOB --yaml), compared with --baseline when given; " +
				"2 to 8 times: a kernel matrix of them, compared with the first; or a kernel matrix saved with --format json"},
			&cli.BoolFlag{Name: "here", Usage: "run every scenario on this kernel, those marked vm too (in a fleet's guest, the kernel under test)"},
			&cli.StringFlag{Name: "label", Usage: "name this kernel configuration `LABEL` in the results (a matrix's column)"},
			&cli.StringFlag{Name: "threshold", Value: "25%", Usage: "smallest slowdown of a median that fails the check (0%..1000%); " +
				"two checks of one kernel on the development machine differed by up to 14% with p < 0.05: measure yours"},
			&cli.StringSliceFlag{Name: "vm-kernel", Usage: "run the suite in the VM on the kernel configuration `SPEC`, " + vm.SpecHelp + "; 2 to 8 times: compare each with the first"},
			&cli.StringFlag{Name: "rounds", Value: "1", Usage: "with several --vm-kernel: boot each kernel `R` times (1..10), the order " +
				"alternating round by round, each boot running every scenario ceil(repeat/R) times"},
			&cli.BoolFlag{Name: "bisect", Usage: "exit as git bisect run reads it: 0 good, 1 a regression against --baseline (bad), 125 cannot test " +
				"(a kernel that did not boot, a scenario that failed, was skipped or is missing), 128 bad input (git stops)"},
			kernelNoiseFlag, formatFlag(checkFormats...), svgFlag, quietFlag,
		},
		Action: func(c *cli.Context) error { return gitBisectExit(c, runCheck(c)) },
	}
}

// checkArgs is a check as the command line describes it, every flag
// checked and every kernel found before anything runs.
type checkArgs struct {
	format    string
	threshold float64
	suite     *check.Suite
	base      *check.Results
	saved     *check.Results // --results: compare this instead of running
	matrix    *check.Matrix  // --results: a saved matrix, or several results, printed
	kernels   []*vm.Kernel
	rounds    int
	vm        bool // --vm: the vm scenarios boot Debian's kernel
	opts      check.RunOptions
}

func runCheck(c *cli.Context) error {
	if err := noArgs(c); err != nil {
		return err
	}
	if c.Bool("print-suite") {
		if c.String("suite") != "" || len(c.StringSlice("results")) > 0 {
			return usagef("--print-suite prints devbulk's own suite: it goes with neither --suite nor --results")
		}
		_, err := c.App.Writer.Write(ownSuite(c))
		return err
	}
	a, err := checkArgsOf(c)
	if err != nil {
		return err
	}
	if a.saved != nil {
		if a.base == nil && a.format == "json" { // a fleet's run becomes a baseline
			return writeJSON(c.App.Writer, a.saved)
		}
		return printCheck(c, a, check.Compare(a.base, a.saved, a.threshold), nil)
	}
	if a.matrix != nil {
		return printCheck(c, a, a.matrix, nil)
	}
	sayPlan(a)
	if len(a.kernels) >= 2 {
		m, runErr := check.RunMatrix(c.Context, a.suite, a.kernels, check.MatrixOptions{ThresholdPct: a.threshold, Rounds: a.rounds}, a.opts)
		if m == nil {
			return runErr
		}
		return printCheck(c, a, m, runErr)
	}
	return runOneKernel(c, a)
}

// sayPlan says, before a run of more than a few seconds, what will run and
// about how long it takes (where progress is shown).
func sayPlan(a *checkArgs) {
	if a.opts.Progress == nil {
		return
	}
	switch len(a.kernels) {
	case 0, 1:
		o := a.opts
		if len(a.kernels) == 1 {
			o.VM, o.AllInVM = a.kernels[0], true
		}
		if p := check.PlanRun(a.suite, o); p.Total() > 5*time.Second {
			a.opts.Progress(p.Say(a.suite.Name))
		}
	default:
		a.opts.Progress(fmt.Sprintf("the %s suite on %d kernel configurations, %d boots each: about %s",
			a.suite.Name, len(a.kernels), a.rounds, check.Rough(check.EstimateMatrix(a.suite, len(a.kernels), a.rounds))))
	}
}

// runOneKernel runs the suite on one kernel (this one, or a's only VM
// kernel), saves the results when asked, and prints the comparison.
func runOneKernel(c *cli.Context, a *checkArgs) error {
	var kernel *vm.Kernel
	if len(a.kernels) == 1 {
		kernel = a.kernels[0]
	}
	ch, results, runErr := check.RunAndCompare(c.Context, a.suite, kernel, check.Baseline{Results: a.base, ThresholdPct: a.threshold}, a.opts)
	if runErr == nil && c.String("save") != "" { // interrupted: what finished is printed, not saved
		// The file was made before the run (outputs.create): a failure
		// now is rare, and the results are still printed.
		runErr = saveResults(c.String("save"), results)
	}
	if ch == nil {
		return runErr
	}
	return printCheck(c, a, ch, runErr)
}

func checkArgsOf(c *cli.Context) (*checkArgs, error) {
	a := &checkArgs{}
	var err error
	if a.format, err = outputFormat(c, checkFormats...); err != nil {
		return nil, err
	}
	if a.threshold, err = check.ParseThreshold(c.String("threshold")); err != nil {
		return nil, usage(err)
	}
	if _, a.suite, err = readSuite(c, ownSuite(c)); err != nil {
		return nil, err
	}
	if a.base, err = readResults(c, "baseline"); err != nil {
		return nil, err
	}
	if err := a.sameSuite(c); err != nil {
		return nil, err
	}
	if a.rounds, err = intFlag(c, "rounds", 1, 10); err != nil {
		return nil, err
	}
	if paths := c.StringSlice("results"); len(paths) > 0 {
		return a, a.readSaved(c, paths)
	}
	if a.format == "lava" && (c.String("svg") != "" || c.String("save") != "") {
		return nil, usagef("--format lava reports to LAVA: it goes with neither --svg nor --save")
	}
	if err := a.readKernels(c); err != nil {
		return nil, err
	}
	a.vm = c.Bool("vm")
	a.opts = check.RunOptions{Progress: progress(c), Counter: counter(c), MountDir: mountDir(), Here: c.Bool("here"), Label: c.String("label")}
	if a.opts.KernelNoise, err = kernelNoise(c); err != nil {
		return nil, err
	}
	if len(a.kernels) > 0 {
		return a, nil
	}
	return a, a.here(c)
}

// here prepares a run on this kernel: its payloads probed, and the VM its
// guest-only scenarios need, or why there is none.
func (a *checkArgs) here(c *cli.Context) error {
	if err := needNetAdmin(); err != nil {
		return err
	}
	if err := a.suite.ProbePayloads(); err != nil {
		return err
	}
	if a.suite.NeedsVM() && !vm.IsGuest() && !a.opts.Here {
		var err error
		if !a.vm {
			a.opts.VMUnavailable = "a vm scenario: --vm boots a VM for it"
		} else if a.opts.VM, err = checkVM(c, "debian"); err != nil {
			return fmt.Errorf("--vm: %w", err) // asked for: no qemu is exit 4, not a skip
		}
	}
	return nil
}

// sameSuite refuses, before anything runs, a baseline the suite's run
// could not be compared with (check.Suite.Comparable), naming both.
func (a *checkArgs) sameSuite(c *cli.Context) error {
	if a.base == nil || len(c.StringSlice("results")) > 0 {
		return nil
	}
	if err := a.ownSuiteMatches(c); err != nil {
		return err
	}
	if err := a.suite.Comparable(a.base); err != nil {
		suite := "devbulk's " + a.suite.Name + " suite"
		if path := c.String("suite"); path != "" {
			suite = "--suite " + path
		}
		return usagef("--baseline %s and %s: %w", c.String("baseline"), suite, err)
	}
	return nil
}

// ownSuiteMatches says how to run the suite of devbulk's that a baseline was
// made with. (The quick suite's scenarios are the full suite's: against a
// quick baseline, a full run's others are new.)
func (a *checkArgs) ownSuiteMatches(c *cli.Context) error {
	if c.String("suite") != "" || a.base.Meta.Suite == a.suite.Name {
		return nil
	}
	full, own := check.Own(a.base.Meta.Suite)
	nowFull, _ := check.Own(a.suite.Name)
	switch {
	case own && (full == nowFull || nowFull):
		return nil // "default": the full suite, as devbulk before the quick one named it
	case own:
		return usagef("--baseline %s was made with devbulk's full suite: give --vm too (or --here in a fleet's guest), or save a quick baseline with check --save", c.String("baseline"))
	}
	return usagef("--baseline %s was made with the suite %q: give that suite with --suite", c.String("baseline"), a.base.Meta.Suite)
}

// readKernels reads --vm-kernel, with the flags that depend on how many
// kernels there are.
func (a *checkArgs) readKernels(c *cli.Context) error {
	specs := c.StringSlice("vm-kernel")
	switch {
	case a.rounds > 1 && len(specs) < 2:
		return usagef("--rounds interleaves the boots of several kernels: give two or more --vm-kernel")
	case c.Bool("here") && (len(specs) > 0 || c.Bool("vm")):
		return usagef("--here runs every scenario on this kernel: it goes with neither --vm-kernel nor --vm")
	case c.Bool("vm") && len(specs) > 0:
		return usagef("--vm boots Debian's kernel for the vm scenarios, --vm-kernel runs every scenario on the kernels it names: choose one")
	case a.format == "lava" && len(specs) >= 2:
		return usagef("--format lava reports one kernel's check: give at most one --vm-kernel")
	case len(specs) > check.MaxKernels:
		return usagef("--vm-kernel: at most %d kernel configurations", check.MaxKernels)
	case len(specs) >= 2 && a.base != nil:
		return usagef("--baseline and several --vm-kernel: the first kernel is the reference")
	case len(specs) >= 2 && c.String("save") != "":
		return usagef("--save and several --vm-kernel: save one kernel's results at a time")
	case c.Bool("bisect") && (a.base == nil || len(specs) > 1):
		return usagef("--bisect compares one kernel with --baseline FILE (saved on the good kernel): give --baseline and at most one --vm-kernel")
	case c.String("svg") != "" && a.base == nil && len(specs) < 2:
		return usagef("--svg draws the comparison: give --baseline FILE or several --vm-kernel")
	}
	for _, spec := range specs {
		k, err := checkVM(c, spec)
		if err != nil {
			return fmt.Errorf("--vm-kernel %s: %w", spec, err)
		}
		a.kernels = append(a.kernels, k)
	}
	return nil
}

// outcome is what a check prints: one kernel's comparison (check.Report)
// or a kernel matrix (check.Matrix).
type outcome interface {
	WriteTable(io.Writer) error
	WriteKTAP(io.Writer) error
	ExitCode() int
}

// printCheck prints the comparison and draws it; the exit status is
// runErr's (an interrupted run), else the check's outcome.
func printCheck(c *cli.Context, a *checkArgs, o outcome, runErr error) error {
	if err := writeCheck(c, a.format, o); err != nil {
		return err
	}
	if runErr != nil {
		return runErr
	}
	// The check's own outcome decides the exit code.
	status := checkStatus(o.ExitCode())
	if r, ok := o.(*check.Report); ok && c.Bool("bisect") {
		status = &exitError{r.GitBisect(), errSilent}
	}
	return firstSaying(status, writeSVG(c, o))
}

// gitBisectExit maps a check --bisect's error to git bisect run's exit
// statuses: bad input stops git (128), what could not be tested is a skip
// (125); the check's own verdict (0, 1, 125) and an interrupt (130) stand.
func gitBisectExit(c *cli.Context, err error) error {
	var ee *exitError
	switch {
	case !c.Bool("bisect"), err == nil, errors.Is(err, context.Canceled):
		return err
	case errors.Is(err, kbuild.ErrStep), errors.Is(err, kbuild.ErrBuild):
		return &exitError{125, err} // this commit does not build, or take the patch, revert or config: skip it
	case errors.Is(err, devbulk.ErrNotSupported):
		return &exitError{128, err} // no toolchain, no KVM asked for: every commit would fail alike
	case errors.As(err, &ee) && ee.code == exitUsage, errors.Is(err, vm.ErrNoQemu):
		return &exitError{128, err} // every commit would fail alike: git stops
	case errors.As(err, &ee) && ee.err == errSilent:
		return err
	}
	return &exitError{125, err}
}

// ownSuite is devbulk's own suite for check's command line: the full one
// where the vm scenarios run (--vm, --here, --vm-kernel), else the quick
// one.
func ownSuite(c *cli.Context) []byte {
	if c.Bool("vm") || c.Bool("here") || len(c.StringSlice("vm-kernel")) > 0 {
		return check.FullSuite()
	}
	return check.QuickSuite()
}

// readSuite reads the suite --suite names, else own (devbulk's): its
// document as written, and parsed (a usage error when it is not a suite).
func readSuite(c *cli.Context, own []byte) ([]byte, *check.Suite, error) {
	src := own
	path := c.String("suite")
	if named, ok := check.NamedSuite(path); ok {
		src = named
	} else if path != "" && !strings.ContainsAny(path, "/.") { // a name, not a file
		return nil, nil, usagef("--suite %s: no suite of that name (devbulk's: %s; a file in this directory: ./%s)", path, strings.Join(check.SuiteNames(), ", "), path)
	} else if path != "" {
		var err error
		if src, err = os.ReadFile(path); err != nil {
			return nil, nil, usagef("--suite: %w", err)
		}
	}
	s, err := check.ParseSuite(bytes.NewReader(src))
	if err != nil {
		return nil, nil, usagef("--suite %s: %s", path, strings.TrimPrefix(err.Error(), "suite: "))
	}
	return src, s, nil
}

// readSaved reads what --results names instead of running the suite: one
// kernel matrix saved with --format json, to print; one run (saved, or a
// LAVA job's), to print or compare with the baseline; or several runs, a
// matrix compared with the first.
func (a *checkArgs) readSaved(c *cli.Context, paths []string) error {
	if len(c.StringSlice("vm-kernel")) > 0 || c.Bool("vm") || c.String("save") != "" || c.Bool("here") || c.String("label") != "" || a.format == "lava" || a.rounds > 1 {
		return usagef("--results prints results already made: it goes with neither --vm-kernel, --vm, --save, --here, --label, --rounds nor --format lava")
	}
	if len(paths) > check.MaxKernels {
		return usagef("--results: at most %d runs in a matrix", check.MaxKernels)
	}
	var runs []*check.Results
	var notes []string // said once the arguments are known to be good
	for _, path := range paths {
		r, note, err := a.readSavedFile(path, len(paths))
		if err != nil || a.matrix != nil {
			return err
		}
		if note != "" {
			notes = append(notes, note)
		}
		runs = append(runs, r)
	}
	switch {
	case len(runs) > 1 && a.base != nil:
		return usagef("--baseline and several --results: the first run is the reference")
	case len(runs) == 1 && a.base == nil && c.String("svg") != "":
		return usagef("--svg draws a comparison: give --baseline FILE or several --results")
	}
	for _, n := range notes {
		fmt.Fprintf(c.App.ErrWriter, "devbulk: %s\n", n)
	}
	if len(runs) == 1 {
		a.saved = runs[0]
		return nil
	}
	var err error
	a.matrix, err = check.MatrixOf(a.threshold, runs...)
	return err
}

// readSavedFile reads one of the files (of n) --results names: a run, with
// a note when it was damaged, or a kernel matrix (a.matrix).
func (a *checkArgs) readSavedFile(path string, n int) (*check.Results, string, error) {
	saved, err := lava.ReadSaved(path)
	var pathErr *fs.PathError // the file's error names it
	switch {
	case errors.As(err, &pathErr):
		return nil, "", usagef("--results: %w", err)
	case err != nil:
		return nil, "", usagef("--results %s: %v", path, err)
	case saved.Matrix != nil && (n > 1 || a.base != nil):
		return nil, "", usagef("--results %s is a kernel matrix: give it alone, without --baseline, to print it", path)
	case saved.Matrix != nil:
		a.matrix = saved.Matrix
		return nil, "", nil
	case saved.Damaged != "":
		return saved.Run, fmt.Sprintf("--results %s: %s; read from its test cases instead (each scenario's headline)", path, saved.Damaged), nil
	}
	return saved.Run, "", nil
}

// readResults reads the results file a flag names, if given.
func readResults(c *cli.Context, flag string) (*check.Results, error) {
	path := c.String(flag)
	if path == "" {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, usagef("--%s: %w", flag, err)
	}
	defer f.Close()
	r, err := check.ReadResults(f)
	if err != nil {
		return nil, usagef("--%s %s: %v", flag, path, err)
	}
	return r, nil
}

// checkVM finds the VM kernel for spec (see vm.Find): an error that says
// qemu is missing (exit 4), or that the kernel is not there (exit 2).
func checkVM(c *cli.Context, spec string) (*vm.Kernel, error) {
	if err := vm.Check(spec); err != nil { // a bad spec is said before a missing qemu
		return nil, usage(err)
	}
	if _, err := exec.LookPath("qemu-system-x86_64"); err != nil {
		return nil, vm.ErrNoQemu
	}
	return findKernel(c, spec)
}

func saveResults(path string, r *check.Results) error {
	return writeFile(path, func(w io.Writer) error { return writeJSON(w, r) })
}

// writeCheck prints the check; in the benchstat format, its results: a
// matrix's with a kernel: configuration key each, so that benchstat can
// tell them apart in one file (-col kernel).
func writeCheck(c *cli.Context, format string, o outcome) error {
	w := c.App.Writer
	switch format {
	case "json":
		return writeJSON(w, o)
	case "ktap":
		return o.WriteKTAP(w)
	case "lava":
		return writeLAVA(c, o.(*check.Report))
	case "benchstat":
		if m, ok := o.(*check.Matrix); ok {
			return check.WriteBenchstat(w, true, m.Results()...)
		}
		return check.WriteBenchstat(w, false, o.(*check.Report).Current)
	}
	return o.WriteTable(w)
}

// writeLAVA reports a check in a LAVA job's test shell: the table for
// people, a test case per scenario and sample, then the results document
// as console lines (lava.EncodeResults) for check --results to read back.
func writeLAVA(c *cli.Context, r *check.Report) error {
	w := c.App.Writer
	if err := r.WriteTable(w); err != nil {
		return err
	}
	if err := lava.WriteCases(c.Context, w, lava.Cases(r)); err != nil {
		return err
	}
	return lava.EncodeResults(w, r.Current)
}

// errCheckFailed ends a check that found a failure; the output said which.
var errCheckFailed = errors.New("check failed: a scenario failed or regressed (see the output)")

func checkStatus(code int) error {
	switch code {
	case check.ExitFail:
		return &exitError{exitFailed, errCheckFailed}
	case check.ExitSkip:
		return devbulk.NotSupported("no scenario could run here")
	}
	return nil
}
