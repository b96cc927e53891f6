package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/devbulk/devbulk/check"
	"github.com/devbulk/devbulk/devices"
	"github.com/devbulk/devbulk/netnsbench"
	"github.com/devbulk/devbulk/vm"
)

func vmCommand() *cli.Command {
	return &cli.Command{
		Name:      "vm",
		Usage:     "run devbulk inside a small VM on other kernels (by default Debian's cloud kernel, which has dummy, vlan, ipip and gre)",
		ArgsUsage: "-- DEVBULK-ARGS...",
		Description: "Boots the kernel under qemu with an initramfs holding this devbulk as init, busybox, iproute2's ip and the\n" +
			"modules of every kind; the guest's stdout, stderr and exit code become devbulk vm's. KVM is used when a\n" +
			"probe boot works, TCG otherwise: under TCG compare ratios, not absolute times. Several --kernel run one\n" +
			"after the other; one that does not boot is reported, and the others still run.",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "kernel", Value: cli.NewStringSlice("debian"), Usage: "kernel configuration `SPEC`, " + vm.SpecHelp + "; repeat for several kernels"},
			&cli.StringFlag{Name: "modules", Usage: "with one kernel path: its module `DIR` (lib/modules/RELEASE)"},
			&cli.StringFlag{Name: "append", Usage: "add `ARGS` to every guest kernel's command line (rcu_nocbs=all, preempt=full, ...)"},
			&cli.IntFlag{Name: "cpus", Value: 2, Usage: "guest CPUs (1..64)"},
			&cli.IntFlag{Name: "mem", Value: 1024, Usage: "guest memory in MiB (256..65536; default: 1024, or more for a guest bench or create whose devices need it)"},
			&cli.StringFlag{Name: "accel", Usage: "kvm or tcg (default: kvm when a probe boot works)"},
			&cli.DurationFlag{Name: "timeout", Value: 30 * time.Minute, Usage: "give up on a guest after this long"},
		},
		Action: vmAction,
	}
}

func vmAction(c *cli.Context) error {
	cfg, kernels, err := vmConfigOf(c)
	if err != nil {
		return err
	}
	var failed []string
	worst := 0
	for _, k := range kernels {
		cfg.Kernel = k
		ctx, cancel := context.WithTimeout(c.Context, c.Duration("timeout"))
		code, err := vm.Run(ctx, cfg, c.Args().Slice(), c.App.Writer, c.App.ErrWriter)
		cancel()
		switch {
		case c.Context.Err() != nil:
			return c.Context.Err()
		case err != nil && len(kernels) == 1:
			return err
		case err != nil:
			fmt.Fprintf(c.App.ErrWriter, "devbulk vm: kernel %s: %v\n", k.Label(), err)
			failed = append(failed, k.Label())
		case code != 0:
			worst = max(worst, code)
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d of %d kernels did not run: %s", len(failed), len(kernels), strings.Join(failed, "; "))
	}
	if worst != 0 {
		return &exitError{code: worst, err: errSilent}
	}
	return nil
}

// vmConfigOf reads vm's flags and finds the guest kernels.
func vmConfigOf(c *cli.Context) (vm.Config, []*vm.Kernel, error) {
	var cfg vm.Config
	if c.Args().Len() == 0 {
		return cfg, nil, usagef("devbulk vm needs the devbulk command to run in the guest, after --: devbulk vm -- bench --kind dummy")
	}
	if err := checkGuestArgs(c.Context, c.Args().Slice()); err != nil {
		return cfg, nil, err
	}
	if n := c.Int("cpus"); n < 1 || n > 64 {
		return cfg, nil, usagef("--cpus %d out of range: 1..64", n)
	}
	if m := c.Int("mem"); m < 256 || m > 65536 {
		return cfg, nil, usagef("--mem %d out of range: 256..65536 MiB", m)
	}
	if err := accelFlag(c); err != nil {
		return cfg, nil, err
	}
	if c.Duration("timeout") <= 0 {
		return cfg, nil, usagef("--timeout %s out of range: a positive duration, as in 30m", c.Duration("timeout"))
	}
	kernels, err := vmKernels(c)
	if err != nil {
		return cfg, nil, err
	}
	cfg = vm.Config{Modules: netnsbench.GuestModules(), CPUs: c.Int("cpus"), MemMiB: guestMem(c), Accel: c.String("accel"),
		// Always, not only on a terminal: which accelerator and kernel ran
		// (and why not KVM) belongs beside every figure the guest prints.
		Log:      func(s string) { fmt.Fprintf(c.App.ErrWriter, "devbulk vm: %s\n", s) },
		Progress: isTerminal(2), // the guest's progress, as lines, while it runs
	}
	return cfg, kernels, nil
}

// guestMem is --mem, or, when it is not given, enough for the guest's
// command: 1024 MiB, or the kernel memory its devices need (a bench's or a
// create's --kind and largest --count, devices.KernelNeed) with a third
// more and 512 MiB for the rest of the guest. The guest's devbulk refuses a
// run that still does not fit.
func guestMem(c *cli.Context) int {
	if c.IsSet("mem") {
		return c.Int("mem")
	}
	k, counts := guestRun(c.Args().Slice())
	return memFor(k, counts, c.Int("mem"))
}

// memFor is the guest memory, MiB, for counts of kind k: at least dflt,
// in steps of 256 MiB.
func memFor(k *devices.Kind, counts []int, dflt int) int {
	if k == nil || len(counts) == 0 {
		return dflt
	}
	var lower *devices.Kind
	if k.NeedsLower {
		lower = devices.LowerKinds()[0]
	}
	need := 512 + int(devices.KernelNeed(k, lower, slices.Max(counts))*4/3/1024)
	return min(65536, max(dflt, (need+255)/256*256))
}

// guestRun reads the kind and counts of a guest bench or create command
// line, or nothing.
func guestRun(args []string) (*devices.Kind, []int) {
	if len(args) == 0 || (args[0] != "bench" && args[0] != "create") {
		return nil, nil
	}
	var k *devices.Kind
	var counts []int
	for i := 1; i < len(args); i++ {
		name, value, inline := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		if !inline && i+1 < len(args) {
			value = args[i+1]
		}
		switch name {
		case "kind":
			k, _ = devices.Lookup(value)
		case "count":
			for _, f := range strings.Split(value, ",") {
				if n, err := strconv.Atoi(strings.TrimSpace(f)); err == nil {
					counts = append(counts, n)
				}
			}
		}
	}
	return k, counts
}

// accelFlag checks --accel.
func accelFlag(c *cli.Context) error {
	switch c.String("accel") {
	case "", "kvm", "tcg":
		return nil
	}
	return usagef("--accel %q: valid are kvm and tcg", c.String("accel"))
}

// vmKernels finds the kernels --kernel names (none: the default), with
// --append and --modules.
func vmKernels(c *cli.Context) ([]*vm.Kernel, error) {
	specs := c.StringSlice("kernel")
	if len(specs) > check.MaxKernels {
		return nil, usagef("--kernel: at most %d kernels", check.MaxKernels)
	}
	var kernels []*vm.Kernel
	for _, spec := range specs {
		k, err := findKernel(c, spec)
		if err != nil {
			return nil, fmt.Errorf("--kernel %s: %w", spec, err)
		}
		k.Append = strings.TrimSpace(k.Append + " " + c.String("append"))
		kernels = append(kernels, k)
	}
	if dir := c.String("modules"); dir != "" {
		if len(kernels) != 1 || kernels[0].Package != "" {
			return nil, usagef("--modules goes with one --kernel PATH (a Debian kernel brings its own)")
		}
		k, err := vm.LocalKernel(kernels[0].Vmlinuz, dir)
		if err != nil {
			return nil, usage(err)
		}
		k.Name, k.Append = kernels[0].Name, kernels[0].Append
		kernels[0] = k
	}
	return kernels, nil
}

// errSilent is an exit status whose message was already printed (by the guest).
var errSilent = errors.New("")

// findKernel finds the kernel configuration spec names (vm.Find), building
// one from source with progress on a terminal: a spec that names nothing
// is a usage error (exit 2); a kernel that could not be fetched or built
// is not.
func findKernel(c *cli.Context, spec string) (*vm.Kernel, error) {
	dir, err := vm.DefaultCache()
	if err != nil {
		return nil, err
	}
	k, err := vm.FindBuilding(c.Context, spec, dir, progress(c))
	if errors.Is(err, vm.ErrBadSpec) {
		return nil, usage(err)
	}
	return k, err
}

// runGuest is main for devbulk as a VM's init: run the arguments the host
// gave, report the exit code, power off.
func runGuest(app *cli.App) {
	g, err := vm.StartGuest()
	if err != nil {
		vm.Fail(err)
	}
	os.Stdout, os.Stderr = g.Stdout, g.Stderr
	app.Writer, app.ErrWriter = g.Stdout, g.Stderr
	err = runApp(context.Background(), app, append([]string{"devbulk"}, g.Args...))
	g.Finish(exitCode(context.Background(), err))
}
