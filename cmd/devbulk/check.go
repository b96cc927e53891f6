package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/devbulk/devbulk"

	"github.com/urfave/cli/v2"
	"gonum.org/v1/plot"

	"github.com/devbulk/devbulk/charts"
	"github.com/devbulk/devbulk/check"
	"github.com/devbulk/devbulk/vm"
)

var checkFormats = []string{"table", "json", "ktap", "benchstat"}

func checkCommand() *cli.Command {
	return &cli.Command{
		Name:  "check",
		Usage: "run a suite of scenarios, save it as a baseline, or compare it with one: exit 1 on a significant regression",
		Description: "Without --suite, devbulk's own suite runs (see --print-suite): the focus kinds in a VM on Debian's kernel,\n" +
			"the host's kinds and the netns scenarios here. Each benchmark is compared with the baseline by the\n" +
			"Mann-Whitney U test (benchstat's): a regression is slower with p < 0.05 and by more than --threshold.\n" +
			"--vm-kernel A --vm-kernel B runs the whole suite in the VM on each kernel and compares B with A.\n" +
			"Exit codes as kselftest: 0 pass, 1 a scenario failed or regressed, 4 nothing could run; 2 bad input.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "suite", Usage: "the suite `FILE` (JSON; default: devbulk's own)"},
			&cli.BoolFlag{Name: "print-suite", Usage: "print devbulk's own suite, to start one of yours from, and exit"},
			&cli.StringFlag{Name: "save", Usage: "write the results to `FILE`, a baseline for later checks"},
			&cli.StringFlag{Name: "baseline", Usage: "compare with the results in `FILE` (from --save)"},
			&cli.StringFlag{Name: "results", Usage: "with --baseline: compare the results saved in `FILE` instead of running the suite (two saved runs, two machines)"},
			&cli.StringFlag{Name: "threshold", Value: "25%", Usage: "smallest slowdown of a median that fails the check (0%..1000%); " +
				"two checks of one kernel on the development machine differed by up to 14% with p < 0.05: measure yours"},
			&cli.StringSliceFlag{Name: "vm-kernel", Usage: "run the suite in the VM on kernel `K` (debian, or PATH[:MODULES_DIR]); twice (A, B): compare B with A"},
			formatFlag(checkFormats...), svgFlag, quietFlag,
		},
		Action: runCheck,
	}
}

func runCheck(c *cli.Context) error {
	if err := noArgs(c); err != nil {
		return err
	}
	if c.Bool("print-suite") {
		_, err := c.App.Writer.Write(check.DefaultSuite())
		return err
	}
	format, err := outputFormat(c, checkFormats...)
	if err != nil {
		return err
	}
	threshold, err := check.ParseThreshold(c.String("threshold"))
	if err != nil {
		return usage(err)
	}
	src := check.DefaultSuite()
	if path := c.String("suite"); path != "" {
		if src, err = os.ReadFile(path); err != nil {
			return usage(err)
		}
	}
	suite, err := check.ParseSuite(bytes.NewReader(src))
	if err != nil {
		return usage(err)
	}
	base, err := readResults(c, "baseline")
	if err != nil {
		return err
	}
	saved, err := readResults(c, "results")
	if err != nil {
		return err
	}
	kernels := c.StringSlice("vm-kernel")
	switch {
	case saved != nil && (base == nil || len(kernels) > 0 || c.String("save") != ""):
		return usagef("--results compares a saved run with --baseline FILE; it goes with neither --vm-kernel nor --save")
	case saved != nil:
		ch := check.Compare(base, saved, threshold)
		if err := writeCheck(c, format, ch, []*check.Results{saved}); err != nil {
			return err
		}
		if err := writeSVG(c, func() (*plot.Plot, error) { return charts.Check(ch) }); err != nil {
			return err
		}
		return checkOutcome(ch)
	case len(kernels) > 2:
		return usagef("--vm-kernel: at most two, A (the baseline) and B")
	case len(kernels) == 2 && base != nil:
		return usagef("--baseline and two --vm-kernel: the first kernel is the baseline")
	case len(kernels) == 2 && c.String("save") != "":
		return usagef("--save and two --vm-kernel: save one kernel's results at a time")
	case c.String("svg") != "" && base == nil && len(kernels) < 2:
		return usagef("--svg draws the comparison: give --baseline FILE or two --vm-kernel")
	}
	var vms []*vm.Kernel // every kernel found before anything runs
	for _, spec := range kernels {
		k, err := checkVM(spec)
		if err != nil {
			return fmt.Errorf("--vm-kernel %s: %w", spec, err)
		}
		vms = append(vms, k)
	}
	o := check.RunOptions{Progress: progress(c), Counter: counter(c), MountDir: mountDir()}
	if len(vms) == 0 {
		if err := needNetAdmin(); err != nil {
			return err
		}
		if needsVM(suite) && !vm.IsGuest() {
			var err error
			if o.VM, err = checkVM("debian"); err != nil {
				o.VMUnavailable = "needs the VM: " + err.Error()
			}
		}
	}
	var results []*check.Results
	var runErr error
	runs := vms
	if len(runs) == 0 {
		runs = []*vm.Kernel{nil} // here, with the suite's vm scenarios in the VM
	}
	for _, k := range runs {
		if k != nil {
			o.VM, o.AllInVM = k, true
		}
		r, err := check.Run(c.Context, suite, o)
		if r != nil {
			results = append(results, r)
		}
		if runErr = err; err != nil {
			break // interrupted: what finished is still printed, not saved
		}
	}
	if runErr == nil && c.String("save") != "" {
		if err := saveResults(c.String("save"), results[0]); err != nil {
			return err
		}
	}
	var ch *check.Check
	switch {
	case len(vms) == 2 && len(results) == 2:
		ch = check.Compare(results[0], results[1], threshold)
	case len(vms) < 2 && len(results) == 1:
		ch = check.Compare(base, results[0], threshold)
	}
	if ch == nil {
		return runErr
	}
	if err := writeCheck(c, format, ch, results); err != nil {
		return err
	}
	if runErr != nil {
		return runErr
	}
	outcome := checkOutcome(ch)
	if err := writeSVG(c, func() (*plot.Plot, error) { return charts.Check(ch) }); err != nil {
		if outcome == nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "devbulk: %v\n", err) // the check's own outcome decides the exit code
	}
	return outcome
}

// readResults reads the results file a flag names, if given.
func readResults(c *cli.Context, flag string) (*check.Results, error) {
	path := c.String(flag)
	if path == "" {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, usage(err)
	}
	defer f.Close()
	r, err := check.ReadResults(f)
	if err != nil {
		return nil, usagef("--%s %s: %v", flag, path, err)
	}
	return r, nil
}

func needsVM(s *check.Suite) bool {
	for _, sc := range s.Scenarios {
		if sc.VM {
			return true
		}
	}
	return false
}

// checkVM finds the VM kernel for spec: an error that says qemu is
// missing (exit 4), or that the kernel is not there (exit 2).
func checkVM(spec string) (*vm.Kernel, error) {
	if _, err := exec.LookPath("qemu-system-x86_64"); err != nil {
		return nil, vm.ErrNoQemu
	}
	path, modules, _ := strings.Cut(spec, ":")
	k, err := guestKernel(path, modules)
	if err != nil {
		if path == "debian" {
			return nil, err
		}
		return nil, usage(err)
	}
	return k, nil
}

func saveResults(path string, r *check.Results) error {
	return writeFile(path, func(w io.Writer) error { return writeJSON(w, r) })
}

// writeCheck prints the check; in the benchstat format, its results: two
// kernels' with a kernel: configuration key each, so that benchstat can
// tell them apart in one file (-col kernel).
func writeCheck(c *cli.Context, format string, ch *check.Check, results []*check.Results) error {
	w := c.App.Writer
	switch format {
	case "json":
		return writeJSON(w, ch)
	case "ktap":
		return ch.WriteKTAP(w)
	case "benchstat":
		return check.WriteBenchstat(w, len(results) > 1, results...)
	}
	return ch.WriteTable(w)
}

// errCheckFailed ends a check that found a failure; the output said which.
var errCheckFailed = errors.New("check failed: a scenario failed or regressed (see the output)")

func checkOutcome(ch *check.Check) error {
	switch ch.ExitCode() {
	case check.ExitFail:
		return &exitError{exitFailed, errCheckFailed}
	case check.ExitSkip:
		return devbulk.NotSupported("no scenario could run here")
	}
	return nil
}
