package main

import (
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// commandLine prepares os.Args for the app: an unknown command is a usage
// error, and flags given after a command's arguments (devbulk plot
// RESULT.json -o out.svg) are moved before them, since urfave/cli stops
// reading flags at the first argument. Everything after "--" is left as it
// is (devbulk vm -- ARGS).
func commandLine(app *cli.App, args []string) ([]string, error) {
	i := 1
	for i < len(args) && strings.HasPrefix(args[i], "-") && args[i] != "--" {
		i++ // the app's own flags (--help, --version)
	}
	if i >= len(args) {
		return args, nil
	}
	cmd := app.Command(args[i])
	if cmd == nil {
		if args[i] == "help" || args[i] == "h" {
			return args, nil
		}
		var names []string
		for _, c := range app.Commands {
			names = append(names, c.Name)
		}
		return nil, usagef("unknown command %q (valid: %s)", args[i], strings.Join(names, ", "))
	}
	if i+1 < len(args) && len(cmd.Subcommands) > 0 {
		if sub := cmd.Command(args[i+1]); sub != nil {
			i, cmd = i+1, sub
		}
	}
	out := slices.Clone(args[:i+1])
	var flags, positional []string
	rest := args[i+1:]
	for j := 0; j < len(rest); j++ {
		a := rest[j]
		if a == "--" {
			positional = append(positional, rest[j:]...)
			break
		}
		f := flagNamed(cmd, a)
		if f == nil {
			positional = append(positional, a)
			continue
		}
		flags = append(flags, a)
		if _, isBool := f.(*cli.BoolFlag); !isBool && !strings.Contains(a, "=") && j+1 < len(rest) {
			j++
			flags = append(flags, rest[j])
		}
	}
	return append(append(out, flags...), positional...), nil
}

// flagNamed returns the command's flag that arg (-x, --name, --name=v)
// sets, if any.
func flagNamed(cmd *cli.Command, arg string) cli.Flag {
	if !strings.HasPrefix(arg, "-") || arg == "-" {
		return nil
	}
	name, _, _ := strings.Cut(strings.TrimLeft(arg, "-"), "=")
	for _, f := range cmd.Flags {
		if slices.Contains(f.Names(), name) {
			return f
		}
	}
	return nil
}
