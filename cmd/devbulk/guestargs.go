package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"
)

// guestChecks are the argument checks of the commands a guest runs, by
// command path: the very functions those commands read their flags with,
// which touch nothing. Commands not here get the command line's own checks
// (unknown commands and flags, values that do not parse, a flag given
// twice, --explain beside JSON).
var guestChecks = map[string]func(*cli.Context) error{
	"bench":       readBy(benchOptionsOf),
	"rmmod":       readBy(rmmodOptionsOf),
	"create":      readBy(createOptionsOf),
	"delete":      readBy(deleteOptionsOf),
	"move":        readBy(moveOptionsOf),
	"netns churn": readBy(churnOptionsOf),
	"faults":      readBy(faultsOptionsOf),
}

func readBy[O any](read func(*cli.Context) (O, error)) func(*cli.Context) error {
	return func(c *cli.Context) error {
		_, err := read(c)
		return err
	}
}

// checkGuestArgs reads the command line a guest would run with this
// devbulk's own parser, running nothing, so that bad arguments are exit 2
// before a VM boots. Only usage errors count: what depends on the kernel
// (a kind it lacks) is the guest's to say.
func checkGuestArgs(ctx context.Context, args []string) error {
	app := newApp()
	app.Writer, app.ErrWriter = io.Discard, io.Discard // help, if asked for, is the guest's
	var each func(parent string, cmds []*cli.Command)
	each = func(parent string, cmds []*cli.Command) {
		for _, cmd := range cmds {
			path := strings.TrimSpace(parent + " " + cmd.Name)
			cmd.OnUsageError, cmd.Before = app.OnUsageError, explainWithTable
			cmd.Action = guestChecks[path]
			if cmd.Action == nil && len(cmd.Subcommands) > 0 {
				cmd.Action = needSubcommand
			} else if cmd.Action == nil {
				cmd.Action = func(*cli.Context) error { return nil }
			}
			each(path, cmd.Subcommands)
		}
	}
	each("", app.Commands)
	line, err := commandLine(app, append([]string{"devbulk"}, args...))
	if err == nil {
		err = app.RunContext(ctx, line)
	}
	var ee *exitError
	if errors.As(err, &ee) && ee.code == exitUsage {
		return usage(fmt.Errorf("the guest's command: %w", err))
	}
	return nil
}
