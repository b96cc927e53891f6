// Command devbulk creates thousands of virtual network devices over batched
// netlink, tears them down through every path the kernel offers, and times
// each. See README.md and docs/ for the commands and the result document.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/devbulk/devbulk"

	"github.com/urfave/cli/v2"

	"github.com/devbulk/devbulk/batch"
	"github.com/devbulk/devbulk/bystander"
	"github.com/devbulk/devbulk/devices"
	"github.com/devbulk/devbulk/namespace"
	"github.com/devbulk/devbulk/netnsbench"
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
			kindsCommand(), benchCommand(), createCommand(), runsCommand(), moveCommand(), deleteCommand(), cleanupCommand(), rmmodCommand(), faultsCommand(), netnsCommand(), vmCommand(), checkCommand(), bisectCommand(), lavaCommand(), plotCommand(),
		},
		OnUsageError: func(c *cli.Context, err error, _ bool) error { return usage(badValue(c, longFlags(err))) },
		// No command is a usage error, one line that names them.
		Action: func(c *cli.Context) error {
			if c.Args().Len() == 0 {
				return usagef("give a command: %s (devbulk --help says what each does)", commandNames(c.App.Commands))
			}
			return nil
		},
		ExitErrHandler: func(*cli.Context, error) {},
		// A kernel configuration's command line may hold commas (rcu_nocbs=0,1).
		DisableSliceFlagSeparator: true,
		// --generate-bash-completion lists commands and flags, for
		// completions/devbulk.bash.
		EnableBashCompletion: true,
	}
}

// runApp runs the command line args: flags after arguments are read, the
// files a run will write are created first, and removed again (while still
// empty) when the run fails.
func runApp(ctx context.Context, app *cli.App, args []string) error {
	var out outputs
	for _, c := range app.Commands {
		c.OnUsageError, c.Before = app.OnUsageError, out.create
		if len(c.Subcommands) > 0 && c.Action == nil {
			c.Action = needSubcommand
		}
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

// needSubcommand is the action of a command that is only its subcommands
// (netns, lava): none given is a usage error, one line that names them.
func needSubcommand(c *cli.Context) error {
	return usagef("%s takes a command: %s (devbulk %s --help says what each does)", c.Command.Name, commandNames(c.Command.Subcommands), c.Command.Name)
}

// commandNames lists commands for an error line, without help's own.
func commandNames(cmds []*cli.Command) string {
	var names []string
	for _, c := range cmds {
		if c.Name != "help" {
			names = append(names, c.Name)
		}
	}
	return strings.Join(names, ", ")
}

// goFlag is a flag as Go's flag package names it in its errors (-json).
var goFlag = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(: | for (?:flag )?)-([A-Za-z0-9][A-Za-z0-9-]+)`) })

// longFlags names flags in a parse error as the command line spells them
// (--json, not -json); one-letter flags keep one dash.
func longFlags(err error) error {
	return errors.New(goFlag().ReplaceAllString(err.Error(), "$1--$2"))
}

// badParse is the CLI library's error for a value it cannot parse.
var badParse = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^invalid value "(.*)" for flag --([A-Za-z0-9-]+): parse error$`)
})

// badValue says what a flag's value should have been, where the CLI
// library says only "parse error": a whole number and the range its usage
// gives, or a duration with its unit.
func badValue(c *cli.Context, err error) error {
	m := badParse().FindStringSubmatch(err.Error())
	if m == nil || c == nil || c.Command == nil {
		return err
	}
	for _, f := range c.Command.Flags {
		if !slices.Contains(f.Names(), m[2]) {
			continue
		}
		switch f := f.(type) {
		case *cli.IntFlag:
			return fmt.Errorf("--%s %q is not a whole number: %s", m[2], m[1], f.Usage)
		case *cli.DurationFlag:
			return fmt.Errorf("--%s %q is not a duration: give one with its unit, such as 90s or 30m", m[2], m[1])
		}
	}
	return err
}

func usagef(format string, args ...any) error { return usage(fmt.Errorf(format, args...)) }

// exitCode prints err, if any, as one line and maps it to an exit code.
func exitCode(ctx context.Context, err error) int {
	if err == nil {
		return exitOK
	}
	var ee *exitError
	clearProgress()
	switch {
	case errors.Is(err, errSilent):
	case errors.Is(err, context.Canceled), strings.HasSuffix(err.Error(), context.Canceled.Error()): // "interrupted", and where, not Go's "context canceled"
		where := strings.TrimSuffix(strings.TrimSuffix(err.Error(), context.Canceled.Error()), ": ")
		fmt.Fprintln(os.Stderr, "devbulk: interrupted"+optional(" during ", where))
	default:
		fmt.Fprintf(os.Stderr, "devbulk: %v\n", err)
	}
	switch {
	case ctx.Err() != nil:
		return exitInterrupted
	case errors.As(err, &ee):
		return ee.code
	case errors.Is(err, devbulk.ErrNotSupported):
		return exitUnsupported
	case errors.Is(err, batch.ErrConflict), errors.Is(err, batch.ErrNotApplicable), errors.Is(err, devices.ErrTooBig), errors.Is(err, namespace.ErrBad), errors.Is(err, runs.ErrUnsafeDir), errors.Is(err, runs.ErrSameNamespace),
		errors.Is(err, netnsbench.ErrBadPayload), errors.Is(err, bystander.ErrBad):
		return exitUsage
	}
	return exitFailed
}
