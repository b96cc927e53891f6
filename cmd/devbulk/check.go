package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/devbulk/devbulk/batch"
	"github.com/devbulk/devbulk/charts"
	"github.com/devbulk/devbulk/check"
	"github.com/devbulk/devbulk/vm"
	"github.com/urfave/cli/v2"
	"gonum.org/v1/plot"
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
			&cli.StringFlag{Name: "threshold", Value: "25%", Usage: "smallest slowdown of a median that fails the check (0%..1000%); " +
				"two checks of one kernel on the development machine differed by up to 14% with p < 0.05: measure yours"},
			&cli.StringSliceFlag{Name: "vm-kernel", Usage: "run the suite in the VM on kernel `K` (debian, or PATH[:MODULES_DIR]); twice or more: compare each with the first"},
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
	var base *check.Results
	if path := c.String("baseline"); path != "" {
		f, err := os.Open(path)
		if err != nil {
			return usage(err)
		}
		base, err = check.ReadResults(f)
		f.Close()
		if err != nil {
			return usagef("--baseline %s: %v", path, err)
		}
	}
	kernels := c.StringSlice("vm-kernel")
	if len(kernels) > 1 && base != nil {
		return usagef("--baseline and several --vm-kernel: the first kernel is the baseline")
	}
	if c.String("svg") != "" && base == nil && len(kernels) < 2 {
		return usagef("--svg draws the comparison: give --baseline FILE or two --vm-kernel")
	}
	if err := needNetAdmin(); err != nil {
		return err
	}
	o := check.RunOptions{Progress: progress(c), Counter: counter(c)}
	var results []*check.Results
	if len(kernels) == 0 {
		if needsVM(suite) && !vm.IsGuest() {
			o.VM, o.VMUnavailable = checkVM("debian")
		}
		r, err := check.Run(c.Context, suite, o)
		if err != nil {
			return err
		}
		results = append(results, r)
	}
	for _, spec := range kernels {
		k, why := checkVM(spec)
		if k == nil {
			return fmt.Errorf("%w: --vm-kernel %s: %s", batch.ErrUnsupported, spec, why)
		}
		o.VM, o.AllInVM = k, true
		r, err := check.Run(c.Context, suite, o)
		if err != nil {
			return err
		}
		results = append(results, r)
	}
	if path := c.String("save"); path != "" {
		if len(results) > 1 {
			return usagef("--save with several --vm-kernel: save one kernel's results at a time")
		}
		if err := saveResults(path, results[0]); err != nil {
			return err
		}
	}
	var checks []*check.Check
	if len(results) == 1 {
		checks = append(checks, check.Compare(base, results[0], threshold))
	} else {
		for _, r := range results[1:] {
			checks = append(checks, check.Compare(results[0], r, threshold))
		}
	}
	for _, ch := range checks {
		if err := writeCheck(c, format, ch); err != nil {
			return err
		}
	}
	if err := writeSVG(c, func() (*plot.Plot, error) { return charts.Check(checks[len(checks)-1]) }); err != nil {
		return err
	}
	return checkOutcome(checks)
}

func needsVM(s *check.Suite) bool {
	for _, sc := range s.Scenarios {
		if sc.VM {
			return true
		}
	}
	return false
}

// checkVM finds the VM kernel for spec, or says why there is none.
func checkVM(spec string) (*vm.Kernel, string) {
	if _, err := exec.LookPath("qemu-system-x86_64"); err != nil {
		return nil, "needs the VM, and qemu-system-x86_64 is not installed (apt-get install qemu-system-x86)"
	}
	path, modules, _ := strings.Cut(spec, ":")
	k, err := guestKernel(path, modules)
	if err != nil {
		return nil, fmt.Sprintf("needs the VM: kernel %s: %v", spec, err)
	}
	return k, ""
}

func saveResults(path string, r *check.Results) error {
	return writeFile(path, func(w io.Writer) error { return writeJSON(w, r) })
}

func writeCheck(c *cli.Context, format string, ch *check.Check) error {
	w := c.App.Writer
	switch format {
	case "json":
		return writeJSON(w, ch)
	case "ktap":
		return ch.WriteKTAP(w)
	case "benchstat":
		return check.WriteBenchstat(w, ch.Current.Meta, ch.Current.Scenarios)
	}
	return ch.WriteTable(w)
}

// errCheckFailed ends a check that found a failure; the output said which.
var errCheckFailed = errors.New("check failed: a scenario failed or regressed (see the output)")

func checkOutcome(checks []*check.Check) error {
	skipped := true
	for _, ch := range checks {
		switch ch.ExitCode() {
		case check.ExitFail:
			return &exitError{exitFailed, errCheckFailed}
		case check.ExitPass:
			skipped = false
		}
	}
	if skipped {
		return fmt.Errorf("%w: no scenario could run here", batch.ErrUnsupported)
	}
	return nil
}
