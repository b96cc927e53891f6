package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/devbulk/devbulk/check"
	"github.com/devbulk/devbulk/lava"
	"github.com/devbulk/devbulk/netnsbench"
	"github.com/devbulk/devbulk/vm"
)

func lavaCommand() *cli.Command {
	return &cli.Command{
		Name:  "lava",
		Usage: "put devbulk's checks into a kernel-testing fleet (LAVA: KernelCI, LKFT): write a job, or run one here with lava-run",
		Description: "devbulk lava job writes what a LAVA job deploys (the kernel, and a ramdisk holding a static devbulk, busybox, the modules\n" +
			"and the suite) and prints the job for a plain device_type qemu device; its test definition runs devbulk check in the\n" +
			"guest and reports each scenario as a test case with its headline figure. devbulk check --results reads the job's\n" +
			"log (or a server's results export) back: a table, a baseline, or with several jobs a kernel matrix.",
		Subcommands: []*cli.Command{lavaJobCommand(), lavaRunCommand()},
	}
}

func lavaJobCommand() *cli.Command {
	return &cli.Command{
		Name:  "job",
		Usage: "write a LAVA job's artifacts into --artifacts DIR and print the job definition (YAML)",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "kernel", Usage: "required: the kernel configuration `SPEC` the job boots, " + vm.SpecHelp},
			&cli.StringFlag{Name: "suite", Usage: "the suite: `FILE`, or quick, full or hunt (default: devbulk's full suite, every scenario on the kernel under test)"},
			&cli.StringFlag{Name: "baseline", Usage: "compare with the results in `FILE` (check --save, or check --results LOG --format json)"},
			&cli.StringFlag{Name: "threshold", Value: "25%", Usage: "smallest slowdown of a median that fails a case (0%..1000%)"},
			&cli.StringFlag{Name: "artifacts", Usage: "required: the `DIR` the job deploys from: vmlinuz and ramdisk.cpio.gz are written there"},
			&cli.StringFlag{Name: "url-base", Usage: "the `URL` where a fleet serves DIR (https://...; default file://DIR)"},
			&cli.StringFlag{Name: "mem", Value: "1024", Usage: "guest memory the job asks for, in `MiB` (256..65536)"},
			quietFlag,
		},
		Action: lavaJob,
	}
}

func lavaJob(c *cli.Context) error {
	if err := cmp.Or(noArgs(c), required(c, "lava job needs --kernel SPEC and --artifacts DIR", "kernel", "artifacts")); err != nil {
		return err
	}
	threshold, err := check.ParseThreshold(c.String("threshold"))
	if err != nil {
		return usage(err)
	}
	mem, err := intFlag(c, "mem", 256, 65536)
	if err != nil {
		return err
	}
	suiteJSON, suite, err := readSuite(c, check.FullSuite()) // the guest is the kernel under test
	if err != nil {
		return err
	}
	baseline, err := baselineJSON(c)
	if err != nil {
		return err
	}
	dir, at, err := artifactsAt(c)
	if err != nil {
		return err
	}
	k, err := findKernel(c, c.String("kernel"))
	if err != nil {
		return fmt.Errorf("--kernel %s: %w", c.String("kernel"), err)
	}
	if there := lava.Existing(dir); len(there) > 0 {
		return usagef("--artifacts %s already holds %s: devbulk does not replace them; give an empty or new directory", c.String("artifacts"), strings.Join(there, " and "))
	}
	// Everything is checked: the directory is the first thing written.
	if err := writeArtifacts(c, dir, lava.ArtifactOptions{Kernel: k, Modules: netnsbench.GuestModules(), Suite: suiteJSON, Baseline: baseline}); err != nil {
		return err
	}
	if !c.Bool("quiet") {
		fmt.Fprintf(c.App.ErrWriter, "devbulk: wrote %s and %s in %s for %s\n", lava.KernelFile, lava.RamdiskFile, dir, k.Describe())
	}
	return lava.Job(c.App.Writer, lava.JobOptions{Kernel: k, URL: at, Suite: suite.Name, Baseline: baseline != nil, ThresholdPct: threshold, MemMiB: mem})
}

// baselineJSON is --baseline's results as the job carries them, or nil.
func baselineJSON(c *cli.Context) ([]byte, error) {
	base, err := readResults(c, "baseline")
	if err != nil || base == nil {
		return nil, err
	}
	return json.Marshal(base)
}

// artifactsAt is where the artifacts go (--artifacts, absolute) and the
// URL the fleet fetches them from (--url-base, else a file:// URL).
func artifactsAt(c *cli.Context) (dir, at string, err error) {
	if dir, err = filepath.Abs(c.String("artifacts")); err != nil {
		return "", "", usage(err)
	}
	at = "file://" + dir
	if u := c.String("url-base"); u != "" {
		p, err := url.Parse(u)
		if err != nil || (p.Scheme != "https" && p.Scheme != "http" && p.Scheme != "file") || p.Path == "" && p.Host == "" {
			return "", "", usagef("--url-base %q: want https://HOST/PATH (or http://, file://) where the fleet serves the artifacts", u)
		}
		at = u
	}
	return dir, at, nil
}

// writeArtifacts writes the kernel and ramdisk into dir, made if missing
// (and removed again, while empty, if writing fails).
func writeArtifacts(c *cli.Context, dir string, o lava.ArtifactOptions) error {
	made, err := writableDir(dir)
	if err != nil {
		return usagef("--artifacts %s: %v", c.String("artifacts"), err)
	}
	if err := lava.Artifacts(dir, o); err != nil {
		if made {
			os.Remove(dir) // only while empty: what devbulk made, and nothing else
		}
		return err
	}
	return nil
}

// writableDir makes dir if it is missing (made says so; not its parents) and checks that a
// file can be made in it (root passes every permission check: only trying
// tells a read-only mount, or a path through a file).
func writableDir(dir string) (made bool, err error) {
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		if err := os.Mkdir(dir, 0o755); err != nil { // its parent must be there
			return false, cleanPathError(err)
		}
		made = true
	}
	f, err := os.CreateTemp(dir, ".devbulk-probe-*")
	if err != nil {
		if made {
			os.Remove(dir)
		}
		return false, cleanPathError(err)
	}
	f.Close()
	return made, os.Remove(f.Name())
}

// cleanPathError is a path error's cause: the flag already names the path.
func cleanPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("cannot write there: %w", pe.Err)
	}
	return err
}

func lavaRunCommand() *cli.Command {
	return &cli.Command{
		Name:      "run",
		Usage:     "run a job devbulk lava job wrote with LAVA's lava-run here, as a fleet would, and print its cases",
		ArgsUsage: "JOB.yaml",
		Description: "Writes a qemu device dictionary (KVM when a probe boot works, TCG otherwise) and runs lava-run with it; needs\n" +
			"lava-dispatcher (apt-get install --no-install-recommends lava-dispatcher) and root. The log is kept with --log.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "log", Usage: "keep lava-run's log in `FILE` (for devbulk check --results)"},
			&cli.StringFlag{Name: "accel", Usage: "kvm or tcg (default: kvm when a probe boot works)"},
			&cli.StringFlag{Name: "mem", Value: "1024", Usage: "the device's memory in `MiB` (256..65536)"},
			quietFlag,
		},
		Action: lavaRun,
	}
}

func lavaRun(c *cli.Context) error {
	if c.Args().Len() != 1 {
		return usagef("devbulk lava run takes one job file (from devbulk lava job), got %d arguments", c.Args().Len())
	}
	mem, err := intFlag(c, "mem", 256, 65536)
	if err != nil {
		return err
	}
	if err := accelFlag(c); err != nil {
		return err
	}
	job, err := lava.ReadJob(c.Args().First())
	if err != nil { // not devbulk's, or not a file to read: bad input
		return usage(err)
	}
	logPath := c.String("log")
	if logPath != "" {
		if err := refuseExisting(logPath); err != nil {
			return err
		}
	}
	o := lava.RunOptions{Accel: c.String("accel"), MemMiB: mem, LogPath: logPath}
	if !c.Bool("quiet") {
		o.Progress = func(s string) { fmt.Fprintf(c.App.ErrWriter, "devbulk: %s\n", s) }
	}
	run, err := lava.RunJob(c.Context, job, o)
	if err != nil {
		return err
	}
	if err := run.WriteTable(c.App.Writer); err != nil {
		return err
	}
	return lavaStatus(run)
}

// lavaStatus is devbulk check's exit status for a job's result.
func lavaStatus(run *lava.Run) error {
	switch run.CheckResult() {
	case lava.Pass:
		return nil
	case lava.Skip:
		return checkStatus(check.ExitSkip)
	}
	return checkStatus(check.ExitFail)
}

// refuseExisting refuses to replace a file (the log of an earlier job).
func refuseExisting(path string) error {
	if _, err := os.Lstat(path); err == nil {
		return usagef("--log %s exists: devbulk does not overwrite it", path)
	}
	if st, err := os.Stat(filepath.Dir(path)); err != nil || !st.IsDir() {
		return usagef("--log %s: no directory %s", path, filepath.Dir(path))
	}
	return nil
}
