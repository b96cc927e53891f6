// Command devbulk creates thousands of virtual network devices over batched
// netlink, tears them down through every path the kernel offers, and times
// each. See the README for the commands and the result document.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/devbulk/devbulk"

	"github.com/urfave/cli/v2"

	"github.com/devbulk/devbulk/batch"
	"github.com/devbulk/devbulk/runs"
	"github.com/devbulk/devbulk/vm"
)

// Exit codes (kselftest's SKIP is 4).
const (
	exitOK          = 0
	exitFailed      = 1
	exitUsage       = 2
	exitUnsupported = 4
	exitInterrupted = 130
)

func main() {
	paceHeap(os.Getenv)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	app := newApp()
	if vm.IsGuest() {
		runGuest(app)
	}
	os.Exit(exitCode(ctx, runApp(ctx, app, os.Args)))
}

func newApp() *cli.App {
	return &cli.App{
		Name:    "devbulk",
		Usage:   "create thousands of virtual network devices and time every way the kernel tears them down",
		Version: devbulk.Version(),
		Commands: []*cli.Command{
			kindsCommand(), benchCommand(), createCommand(), deleteCommand(), cleanupCommand(), rmmodCommand(), netnsCommand(), vmCommand(), checkCommand(), plotCommand(),
		},
		OnUsageError:   func(_ *cli.Context, err error, _ bool) error { return usage(err) },
		ExitErrHandler: func(*cli.Context, error) {},
		// A kernel configuration's command line may hold commas (rcu_nocbs=0,1).
		DisableSliceFlagSeparator: true,
	}
}

// runApp runs the command line args: flags after arguments are read, the
// files a run will write are created first, and removed again (while still
// empty) when the run fails.
func runApp(ctx context.Context, app *cli.App, args []string) error {
	var out outputs
	for _, c := range app.Commands {
		c.OnUsageError, c.Before = app.OnUsageError, out.create
		for _, sub := range c.Subcommands {
			sub.OnUsageError, sub.Before = app.OnUsageError, out.create
		}
	}
	args, err := commandLine(app, args)
	if err == nil {
		err = app.RunContext(ctx, args)
	}
	if err != nil {
		out.removeEmpty()
	}
	return err
}

// exitError carries an exit code with an error.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func usage(err error) error { return &exitError{exitUsage, err} }

func usagef(format string, args ...any) error { return usage(fmt.Errorf(format, args...)) }

// exitCode prints err, if any, as one line and maps it to an exit code.
func exitCode(ctx context.Context, err error) int {
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if !errors.Is(err, errSilent) {
		fmt.Fprintf(os.Stderr, "devbulk: %v\n", err)
	}
	switch {
	case ctx.Err() != nil:
		return exitInterrupted
	case errors.As(err, &ee):
		return ee.code
	case errors.Is(err, devbulk.ErrNotSupported):
		return exitUnsupported
	case errors.Is(err, batch.ErrConflict), errors.Is(err, batch.ErrNotApplicable), errors.Is(err, runs.ErrBadNetns):
		return exitUsage
	}
	return exitFailed
}
