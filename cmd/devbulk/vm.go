package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/devbulk/devbulk/devices"
	"github.com/devbulk/devbulk/vm"
)

func vmCommand() *cli.Command {
	return &cli.Command{
		Name:      "vm",
		Usage:     "run devbulk inside a small VM on another kernel (by default Debian's cloud kernel, which has dummy, vlan, ipip and gre)",
		ArgsUsage: "-- DEVBULK-ARGS...",
		Description: "Boots the kernel under qemu with an initramfs holding this devbulk as init, busybox, iproute2's ip and the\n" +
			"modules of every kind; the guest's stdout, stderr and exit code become devbulk vm's. KVM is used when a\n" +
			"probe boot works, TCG otherwise: under TCG compare ratios, not absolute times.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "kernel", Value: "debian", Usage: "`debian` (apt's linux-image-cloud-amd64, cached) or the path of a kernel image (arch/x86/boot/bzImage)"},
			&cli.StringFlag{Name: "modules", Usage: "with a kernel path: its module `DIR` (lib/modules/RELEASE, with modules.dep)"},
			&cli.IntFlag{Name: "cpus", Value: 2, Usage: "guest CPUs (1..64)"},
			&cli.IntFlag{Name: "mem", Value: 1024, Usage: "guest memory in MiB (256..65536)"},
			&cli.StringFlag{Name: "accel", Usage: "kvm or tcg (default: kvm when a probe boot works)"},
			&cli.DurationFlag{Name: "timeout", Value: 30 * time.Minute, Usage: "give up on the guest after this long"},
		},
		Action: vmAction,
	}
}

func vmAction(c *cli.Context) error {
	cfg, err := vmConfigOf(c)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(c.Context, c.Duration("timeout"))
	defer cancel()
	code, err := vm.Run(ctx, cfg, c.Args().Slice(), c.App.Writer, c.App.ErrWriter)
	if err != nil {
		return err
	}
	if code != 0 {
		return &exitError{code: code, err: errSilent}
	}
	return nil
}

// vmConfigOf reads vm's flags and finds the guest kernel.
func vmConfigOf(c *cli.Context) (vm.Config, error) {
	var cfg vm.Config
	if c.Args().Len() == 0 {
		return cfg, usagef("devbulk vm needs the devbulk command to run in the guest, after --: devbulk vm -- bench --kind dummy")
	}
	if n := c.Int("cpus"); n < 1 || n > 64 {
		return cfg, usagef("--cpus %d out of range: 1..64", n)
	}
	if m := c.Int("mem"); m < 256 || m > 65536 {
		return cfg, usagef("--mem %d out of range: 256..65536 MiB", m)
	}
	switch c.String("accel") {
	case "", "kvm", "tcg":
	default:
		return cfg, usagef("--accel %q: valid are kvm and tcg", c.String("accel"))
	}
	if c.Duration("timeout") <= 0 {
		return cfg, usagef("--timeout %s out of range: a positive duration, as in 30m", c.Duration("timeout"))
	}
	if c.String("modules") != "" && c.String("kernel") == "debian" {
		return cfg, usagef("--modules goes with --kernel PATH (the Debian kernel brings its own)")
	}
	k, err := guestKernel(c.String("kernel"), c.String("modules"))
	if err != nil {
		return cfg, err
	}
	var modules []string
	for _, kind := range devices.All() {
		modules = append(modules, kind.Module)
	}
	cfg = vm.Config{Kernel: k, Modules: modules, CPUs: c.Int("cpus"), MemMiB: c.Int("mem"), Accel: c.String("accel"),
		// Always, not only on a terminal: which accelerator ran (and why
		// not KVM) belongs beside every figure the guest prints.
		Log:      func(s string) { fmt.Fprintf(c.App.ErrWriter, "devbulk vm: %s\n", s) },
		Progress: isTerminal(2), // the guest's progress, as lines, while it runs
	}
	return cfg, nil
}

// errSilent is an exit status whose message was already printed (by the guest).
var errSilent = errors.New("")

func guestKernel(kernel, modules string) (*vm.Kernel, error) {
	if kernel != "debian" {
		k, err := vm.LocalKernel(kernel, modules)
		if err != nil {
			return nil, usage(err) // a kernel path that is not one
		}
		return k, nil
	}
	dir, err := vm.DefaultCache()
	if err != nil {
		return nil, err
	}
	return vm.DebianKernel(dir)
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
