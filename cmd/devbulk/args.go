package main

import (
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// passOn names the commands whose arguments are another devbulk command
// line: their flags end at the first argument, as urfave/cli reads them.
var passOn = map[string]bool{"vm": true}

// commandLine prepares os.Args for the app: an unknown command or
// subcommand is a usage error, and flags given after a command's arguments
// (devbulk plot RESULT.json -o out.svg) are moved before them, since
// urfave/cli stops reading flags at the first argument. Everything after
// "--" is left as it is, and so are the arguments of devbulk vm.
func commandLine(app *cli.App, args []string) ([]string, error) {
	i := 1
	for i < len(args) && strings.HasPrefix(args[i], "-") && args[i] != "--" {
		i++ // the app's own flags (--help, --version)
	}
	if i >= len(args) {
		return args, nil
	}
	if args[i] == "help" || args[i] == "h" {
		if i+1 < len(args) && app.Command(args[i+1]) == nil {
			return nil, unknown("command", args[i+1], app.Commands)
		}
		return args, nil
	}
	cmd := app.Command(args[i])
	if cmd == nil {
		return nil, unknown("command", args[i], app.Commands)
	}
	if len(cmd.Subcommands) > 0 && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
		sub := cmd.Command(args[i+1])
		if sub == nil && args[i+1] != "help" && args[i+1] != "h" {
			return nil, unknown(cmd.Name+" command", args[i+1], cmd.Subcommands)
		}
		if sub == nil && i+2 < len(args) && !strings.HasPrefix(args[i+2], "-") && cmd.Command(args[i+2]) == nil { // netns help nope
			return nil, unknown(cmd.Name+" command", args[i+2], cmd.Subcommands)
		}
		if sub != nil {
			i, cmd = i+1, sub
		}
	}
	flags, positional := flagsFirst(cmd, args[i+1:])
	if err := givenOnce(cmd, flags); err != nil {
		return nil, err
	}
	if passOn[cmd.Name] {
		return args, nil
	}
	return append(append(slices.Clone(args[:i+1]), flags...), positional...), nil
}

// givenOnce refuses a flag that takes one value given twice (--count 10
// --count 20): the last would win silently. Flags that take a list
// (--kernel, --vm-kernel, --results) may repeat.
func givenOnce(cmd *cli.Command, flags []string) error {
	seen := map[cli.Flag]string{}
	for _, a := range flags {
		f := flagNamed(cmd, a)
		if f == nil {
			continue // a flag's value
		}
		if m, ok := f.(interface{ IsSliceFlag() bool }); ok && m.IsSliceFlag() {
			continue
		}
		name, _, _ := strings.Cut(a, "=")
		if first, ok := seen[f]; ok {
			return usagef("%s --%s given twice%s: it takes one value", cmd.Name, f.Names()[0], optional(" as ", alias(first, name)))
		}
		seen[f] = name
	}
	return nil
}

// flagsFirst splits a command's arguments into its flags (with their
// values) and the rest, in order; everything after "--" is the rest.
func flagsFirst(cmd *cli.Command, rest []string) (flags, positional []string) {
	for j := 0; j < len(rest); j++ {
		a := rest[j]
		if a == "--" {
			return flags, append(positional, rest[j:]...)
		}
		f := flagNamed(cmd, a)
		if f == nil && passOn[cmd.Name] {
			return flags, append(positional, rest[j:]...) // the rest is another command line
		}
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
	return flags, positional
}

// alias is how a flag given twice was spelled, when not the same way.
func alias(first, second string) string {
	if first == second {
		return ""
	}
	return first + " and " + second
}

func unknown(what, name string, cmds []*cli.Command) error {
	var names []string
	for _, c := range cmds {
		names = append(names, c.Name)
	}
	return usagef("unknown %s %q (valid: %s)", what, name, strings.Join(names, ", "))
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
