package main

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/devbulk/devbulk"
	"github.com/devbulk/devbulk/devices"
	"github.com/devbulk/devbulk/kmod"
	"github.com/devbulk/devbulk/namespace"
	"github.com/devbulk/devbulk/rcutrace"
	"github.com/devbulk/devbulk/vm"

	"github.com/devbulk/devbulk/batch"
	"github.com/devbulk/devbulk/runs"
)

func TestCommandLine(t *testing.T) {
	app := newApp()
	for _, c := range []struct{ in, want string }{
		{"devbulk plot r.json -o out.svg", "devbulk plot -o out.svg r.json"},
		{"devbulk plot r.json --output=out.svg", "devbulk plot --output=out.svg r.json"},
		{"devbulk netns churn --workers 2 --json", "devbulk netns churn --workers 2 --json"},
		{"devbulk bench --kind ifb --json", "devbulk bench --kind ifb --json"},
		{"devbulk plot r.json -- -o", "devbulk plot r.json -- -o"},
		// vm passes its arguments on: a guest's flags stay the guest's.
		{"devbulk vm bench --timeout 5s", "devbulk vm bench --timeout 5s"},
		{"devbulk vm --cpus 2 -- bench --kind dummy", "devbulk vm --cpus 2 -- bench --kind dummy"},
		{"devbulk --help", "devbulk --help"},
		{"devbulk help plot", "devbulk help plot"},
	} {
		got, err := commandLine(app, strings.Fields(c.in))
		if err != nil || strings.Join(got, " ") != c.want {
			t.Errorf("%q: %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{"devbulk nosuch", "devbulk netns chrun", "devbulk help nosuch"} {
		_, err := commandLine(app, strings.Fields(in))
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != exitUsage || !strings.Contains(err.Error(), "unknown") {
			t.Errorf("%q: %v, want a usage error", in, err)
		}
	}
}

// Every flag of every command that takes one value, given twice, is a
// usage error naming it, before the command runs (issue 44, item 6); a
// flag that takes a list may repeat.
func TestFlagGivenTwiceRefused(t *testing.T) {
	app := newApp()
	var each func(path []string, cmds []*cli.Command)
	each = func(path []string, cmds []*cli.Command) {
		for _, cmd := range cmds {
			p := append(slices.Clone(path), cmd.Name)
			each(p, cmd.Subcommands)
			for _, f := range cmd.Flags {
				name := "--" + f.Names()[0]
				give := []string{name, "x"}
				if _, isBool := f.(*cli.BoolFlag); isBool {
					give = give[:1]
				}
				args := append(append(append([]string{"devbulk"}, p...), give...), give...)
				_, err := commandLine(app, args)
				var ee *exitError
				if m, ok := f.(interface{ IsSliceFlag() bool }); ok && m.IsSliceFlag() {
					if err != nil {
						t.Errorf("%q: %v; a list flag may repeat", args, err)
					}
				} else if !errors.As(err, &ee) || ee.code != exitUsage || !strings.Contains(err.Error(), name+" given twice") {
					t.Errorf("%q: %v; want a usage error naming %s", args, err, name)
				}
			}
		}
	}
	each(nil, app.Commands)
}

// One place maps errors to exit codes: usage 2, unsupported 4, failures 1,
// interrupted 130.
func TestExitCodes(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range []struct {
		ctx  context.Context
		err  error
		code int
	}{
		{context.Background(), nil, 0},
		{context.Background(), errors.New("boom"), 1},
		{context.Background(), usagef("bad"), 2},
		{context.Background(), fmt.Errorf("x: %w", batch.ErrConflict), 2},
		{context.Background(), fmt.Errorf("x: %w", batch.ErrNotApplicable), 2},
		{context.Background(), fmt.Errorf("x: %w", namespace.ErrBad), 2},
		{context.Background(), fmt.Errorf("x: %w", devbulk.ErrNotSupported), 4},
		{context.Background(), fmt.Errorf("x: %w", vm.ErrNoQemu), 4},
		{context.Background(), fmt.Errorf("x: %w", kmod.ErrNoModules), 4},
		{context.Background(), fmt.Errorf("x: %w", rcutrace.ErrUnavailable), 4},
		{context.Background(), fmt.Errorf("x: %w", runs.ErrRunning), 1},
		{cancelled, errors.New("context canceled"), 130},
		{context.Background(), &exitError{code: 3, err: errSilent}, 3},
	} {
		if got := exitCode(c.ctx, c.err); got != c.code {
			t.Errorf("exitCode(%v) = %d, want %d", c.err, got, c.code)
		}
	}
}

// Every flag's placeholder (the first `quoted` word of its usage, which
// urfave/cli shows after the flag) is one word: `see devbulk kinds` once
// made `--kind devbulk kinds` in bench --help.
func TestHelpPlaceholders(t *testing.T) {
	placeholder := regexp.MustCompile("`([^`]*)`") // the first pair, as urfave/cli reads it
	var walk func(path string, cmds []*cli.Command)
	walk = func(path string, cmds []*cli.Command) {
		for _, c := range cmds {
			for _, f := range c.Flags {
				usage := f.(cli.DocGenerationFlag).GetUsage()
				if m := placeholder.FindStringSubmatch(usage); m != nil && strings.Contains(m[1], " ") {
					t.Errorf("%s %s --%s: placeholder %q (usage %q)", path, c.Name, f.Names()[0], m[1], usage)
				}
			}
			walk(path+" "+c.Name, c.Subcommands)
		}
	}
	walk("devbulk", newApp().Commands)
}

// devbulk vm sizes the guest for a bench or create of many devices: 1024
// MiB for small runs, the devices' kernel memory with a third more and
// 512 MiB otherwise.
func TestGuestMem(t *testing.T) {
	k, counts := guestRun([]string{"bench", "--kind", "dummy", "--count=1000,200000", "--delete", "group"})
	if k != devices.Dummy || !slices.Equal(counts, []int{1000, 200000}) {
		t.Fatalf("guestRun: %v %v", k, counts)
	}
	if m := memFor(k, counts, 1024); m != 12288 { // 512 + 200000*45*4/3/1024 = 12230, in steps of 256
		t.Errorf("200000 dummies: %d MiB", m)
	}
	if m := memFor(devices.Dummy, []int{1000}, 1024); m != 1024 {
		t.Errorf("1000 dummies: %d MiB, want the default", m)
	}
	if k, _ := guestRun([]string{"netns", "churn", "--count", "5"}); k != nil {
		t.Errorf("a netns command sized as a device run: %v", k)
	}
}
