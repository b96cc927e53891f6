package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/devbulk/devbulk"
	"github.com/devbulk/devbulk/bisect"
	"github.com/devbulk/devbulk/check"
	"github.com/devbulk/devbulk/kbuild"
	"github.com/devbulk/devbulk/kernlog"
	"github.com/devbulk/devbulk/vm"
)

func bisectCommand() *cli.Command {
	return &cli.Command{
		Name:  "bisect",
		Usage: "find the kernel configuration where a teardown's time changed: a scenario measured in the VM on each, the ends first, each step against both ends",
		Description: "The list is --kernels FILE (one configuration a line, 'K [ARGS]' as --vm-kernel takes them: the first known good,\n" +
			"the last known bad) or Debian's point releases from --good to --bad (debian:6.1.0-47 .. debian:6.1.0-57). Both\n" +
			"ends are booted alternately first; when they do not differ significantly by more than --threshold, devbulk says so\n" +
			"and stops. Each step boots a kernel and compares it with both ends (Mann-Whitney U, and --threshold), booting it again\n" +
			"while that is inconclusive; a kernel that does not boot, or hangs past four times the longest boot, is skipped. The\n" +
			"last good and first bad kernels are then measured again, alternating: the answer stands only if they still differ.\n" +
			"Every boot is logged (--log): the same command after Ctrl-C or kill -9 resumes, booting nothing it had measured.\n" +
			"Exit 0: found and confirmed, or no significant change between the ends; 1: found but not confirmed; 2: bad input.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "kernels", Usage: "the ordered kernel configurations, first good, last bad, as `LIST`: " + vm.ListForms() +
				" ('K [ARGS]' as --vm-kernel takes them, # comments); a build holds bzImage (or vmlinuz*) and, for modules, lib/modules/RELEASE"},
			&cli.StringFlag{Name: "good", Usage: "a known good kernel `SPEC`, where the list starts: a Debian kernel (debian:6.1.0-47, or a linux-image-... package), or a source at a revision (src:~/linux@v6.1.190: the commits up to --bad, each built)"},
			&cli.StringFlag{Name: "bad", Usage: "a known bad kernel `SPEC`, where the list ends: a Debian kernel of the same series and flavour, or the same source at a later revision (src:~/linux@v6.1.192)"},
			&cli.StringFlag{Name: "suite", Usage: "the suite the scenario comes from: `FILE`, or quick, full or hunt (default: devbulk's full suite)"},
			&cli.StringFlag{Name: "scenario", Usage: "the suite's scenario `NAME` to measure (required when the suite has several)"},
			&cli.StringFlag{Name: "metric", Usage: "the benchmark that decides: the first whose name starts with `PREFIX` (default: the scenario's first delete, or its netns figure)"},
			&cli.StringFlag{Name: "threshold", Value: "25%", Usage: "smallest change of the metric's median that counts (0%..1000%)"},
			&cli.StringFlag{Name: "repeat", Value: "4", Usage: "measurements of the scenario in each boot (3..100)"},
			&cli.StringFlag{Name: "max-boots", Value: "3", Usage: "boots of one candidate at most before it is skipped as inconclusive (1..10)"},
			&cli.StringFlag{Name: "log", Usage: "keep every boot in `FILE`, to resume from (default: under the user cache, named after the bisection)"},
			&cli.BoolFlag{Name: "profile", Usage: "also break the scenario down by kernel function: the report's table then sets the two kernels' profiles side by side"},
			&cli.BoolFlag{Name: "json", Usage: "print the result document (--format json)"},
			formatFlag("table", "json", "ktap"), svgFlag, quietFlag,
		},
		Action: runBisect,
	}
}

// bisection is a bisection as the command line describes it.
type bisection struct {
	opts     bisect.Options
	scenario check.ScenarioSpec
	log      string
	format   string
}

func runBisect(c *cli.Context) error {
	if err := noArgs(c); err != nil {
		return err
	}
	b, err := bisectionOf(c)
	if err != nil {
		return err
	}
	// The rules (threshold, boots) are not in the key: a log cut where a
	// changed rule takes the search another way keeps the boots before.
	if b.opts.Log, err = bisect.OpenLog(b.log, bisect.Key(b.opts.Specs, b.scenario, b.opts.Metric)); err != nil {
		return err
	}
	if n := b.opts.Log.Resumed(); n > 0 && !c.Bool("quiet") {
		fmt.Fprintf(c.App.ErrWriter, "devbulk: resuming the bisection logged in %s: %d boots measured\n", b.log, n)
	}
	b.opts.Progress = progress(c)
	var complaints []bootComplaints
	m := check.Measurer{Scenario: b.scenario, Kernel: func(_ context.Context, spec string) (*vm.Kernel, error) { return findKernel(c, spec) },
		Complained: func(spec string, f []kernlog.Finding) { complaints = append(complaints, bootComplaints{spec, f}) }}
	r, runErr := bisect.Run(c.Context, m, b.opts)
	if r == nil {
		return runErr
	}
	if err := printBisect(c, b, r, complaints); err != nil || runErr != nil {
		return errors.Join(runErr, err)
	}
	if r.Found && !r.Confirmed {
		return &exitError{exitFailed, errSilent}
	}
	return nil
}

// bisectDoc is the bisection's result document (--json, and what --svg
// hands devbulk-plot).
type bisectDoc struct {
	*bisect.Result
	Scenario string `json:"scenario"`
	Words    string `json:"words"`
	// The answer, only when there is one: the Result's indexes, 0 when
	// nothing was found, would read as the first kernel.
	LastGoodAt *int   `json:"last_good,omitempty"`
	FirstBadAt *int   `json:"first_bad,omitempty"`
	LastGood   string `json:"last_good_spec,omitempty"`
	FirstBad   string `json:"first_bad_spec,omitempty"`
	// FirstBadCommit names the first bad commit of a source's history:
	// its id, subject and author.
	FirstBadCommit string `json:"first_bad_commit,omitempty"`
	// Complaints are the kernel's complaints during this command's boots,
	// by boot: the search decides by figures, and says these beside them.
	Complaints []bootComplaints `json:"kernel_complaints,omitempty"`
}

// bootComplaints is what the kernel complained of during one boot.
type bootComplaints struct {
	Spec     string            `json:"spec"`
	Findings []kernlog.Finding `json:"findings"`
}

// write says the complaints after the bisection's report.
func (b bootComplaints) write(w io.Writer, prefix string) {
	fmt.Fprintf(w, "%sthe kernel complained %s during a boot of %s (not part of the verdict):\n", prefix, devbulk.Plural(len(b.Findings), "time"), b.Spec)
	for _, f := range b.Findings {
		f.Write(w, prefix+"  ")
	}
}

func newBisectDoc(r *bisect.Result, scenario string, complaints []bootComplaints) bisectDoc {
	doc := bisectDoc{Result: r, Scenario: scenario, Words: r.Words(scenario), Complaints: complaints}
	if r.Found {
		doc.LastGoodAt, doc.FirstBadAt = &r.LastGood, &r.FirstBad
		doc.LastGood, doc.FirstBad = r.Specs[r.LastGood], r.Specs[r.FirstBad]
		doc.FirstBadCommit = kbuild.Describe(context.Background(), doc.FirstBad)
	}
	return doc
}

func printBisect(c *cli.Context, b *bisection, r *bisect.Result, complaints []bootComplaints) error {
	doc := newBisectDoc(r, b.scenario.Name, complaints)
	var err error
	switch b.format {
	case "json":
		err = json.NewEncoder(c.App.Writer).Encode(doc)
	case "ktap":
		err = r.WriteKTAP(c.App.Writer, b.scenario.Name)
		for _, k := range complaints {
			k.write(c.App.Writer, "# ")
		}
	default:
		if doc.FirstBadCommit != "" {
			fmt.Fprintf(c.App.Writer, "first bad commit: %s\n", doc.FirstBadCommit)
		}
		err = r.WriteReport(c.App.Writer, b.scenario.Name, reproduce(b, r))
		for _, k := range complaints {
			k.write(c.App.Writer, "")
		}
		if n := b.opts.Log.Resumed(); n > 0 {
			fmt.Fprintf(c.App.Writer, "the kernel's complaints during the %s resumed from the log are not known (the log keeps figures)\n", devbulk.Plural(n, "boot"))
		}
	}
	return firstSaying(err, writeSVG(c, doc))
}

// reproduce are the commands that measure the answer's two kernels by
// hand, and the bisection again (from its log).
func reproduce(b *bisection, r *bisect.Result) []string {
	var reproduce []string
	pair := []int{0, len(r.Specs) - 1} // the ends, where nothing was found
	if r.Found {
		pair = []int{r.LastGood, r.FirstBad}
	}
	for _, k := range pair {
		reproduce = append(reproduce, "devbulk vm --kernel "+strconv.Quote(r.Specs[k])+" -- "+strings.Join(b.scenario.Command(), " "))
	}
	return append(reproduce, "devbulk "+strings.Join(os.Args[1:], " ")+"   # this bisection, from its log")
}

// bisectionOf reads and checks the command line: nothing is booted until
// every kernel, the scenario and the metric are known to be good.
func bisectionOf(c *cli.Context) (*bisection, error) {
	specs, err := kernelList(c)
	if err != nil {
		return nil, err
	}
	b := &bisection{opts: bisect.Options{Specs: specs, Metric: c.String("metric")}}
	if kbuild.Commits(specs) { // commits: the culprit is confirmed by its revert
		b.opts.Revert = func(firstBad string) string { return kbuild.RevertOn(specs[len(specs)-1], firstBad) }
	}
	if b.format, err = outputFormat(c, "table", "json", "ktap"); err != nil {
		return nil, err
	}
	if b.opts.ThresholdPct, err = check.ParseThreshold(c.String("threshold")); err != nil {
		return nil, usage(err)
	}
	if b.opts.MaxBoots, err = intFlag(c, "max-boots", 1, 10); err != nil {
		return nil, err
	}
	if b.scenario, err = bisectScenario(c); err != nil {
		return nil, err
	}
	if b.opts.Metric, err = b.scenario.Metric(b.opts.Metric); err != nil {
		return nil, usagef("--metric %w", err)
	}
	if _, err := exec.LookPath("qemu-system-x86_64"); err != nil {
		return nil, vm.ErrNoQemu
	}
	b.log, err = bisectLog(c, b)
	return b, err
}

// kernelList is the ordered list of kernel configurations: what --kernels
// names (vm.KernelList), or Debian's packages from --good to --bad (the
// range GOOD..BAD); each is checked without fetching anything.
func kernelList(c *cli.Context) ([]string, error) {
	arg, good, bad := c.String("kernels"), c.String("good"), c.String("bad")
	switch {
	case arg != "" && (good != "" || bad != ""):
		return nil, usagef("--kernels and --good/--bad: give the list one way")
	case good != "" && bad != "":
		arg = good + ".." + bad
	case arg == "":
		return nil, usagef("bisect needs --kernels FILE, or --good and --bad Debian kernels (debian:6.1.0-47, debian:6.1.0-57)")
	}
	specs, err := vm.KernelList(arg)
	if errors.Is(err, vm.ErrBadSpec) {
		return nil, usage(err)
	} else if err != nil {
		return nil, err
	}
	for _, spec := range specs {
		if err := vm.Check(spec); err != nil {
			return nil, usagef("kernel %s: %w", spec, err)
		}
	}
	return specs, nil
}

// bisectScenario is the scenario --scenario names in the suite, measured
// --repeat times in each boot.
func bisectScenario(c *cli.Context) (check.ScenarioSpec, error) {
	_, suite, err := readSuite(c, check.FullSuite())
	if err != nil {
		return check.ScenarioSpec{}, err
	}
	name := c.String("scenario")
	if name == "" && len(suite.Scenarios) == 1 {
		name = suite.Scenarios[0].Name
	}
	sc, names, ok := suite.Scenario(name)
	if !ok {
		return sc, usagef("--scenario %q: the suite %s has %s", name, suite.Name, strings.Join(names, ", "))
	}
	if c.Bool("profile") {
		sc.Profile()
	}
	sc.Repeat, err = intFlag(c, "repeat", 3, 100) // 3 a boot: a U test can tell a candidate from an end after one boot
	return sc, err
}

// bisectLog is where the bisection keeps its boots: --log, else a file
// named after it under the user cache.
func bisectLog(c *cli.Context, b *bisection) (string, error) {
	if path := c.String("log"); path != "" {
		return path, nil
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory for the bisection's log (give --log FILE): %w", err)
	}
	return filepath.Join(dir, "devbulk", "bisect", bisect.Key(b.opts.Specs, b.scenario, b.opts.Metric)+".json"), nil
}
