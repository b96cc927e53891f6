package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/devbulk/devbulk/namespace"

	"github.com/urfave/cli/v2"
	"golang.org/x/sys/unix"

	"github.com/devbulk/devbulk/devices"
	"github.com/devbulk/devbulk/nlbatch"
	"github.com/devbulk/devbulk/runs"
	"github.com/devbulk/devbulk/vm"
)

// capNetAdmin is the capability bit of CAP_NET_ADMIN.
const capNetAdmin = 12

// needNetAdmin fails unless the process has CAP_NET_ADMIN.
func needNetAdmin() error {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "CapEff:"); ok {
			caps, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			if err == nil && caps&(1<<capNetAdmin) != 0 {
				return nil
			}
		}
	}
	return usagef("devbulk needs CAP_NET_ADMIN (run it as root)")
}

// support probes the kernel for kinds (all when none) and returns what
// works, by kind name.
func support(kinds ...*devices.Kind) (map[string]bool, []devices.Support, error) {
	sup, err := devices.Probe(kinds...)
	if err != nil {
		return nil, nil, fmt.Errorf("probing kinds: %w", err)
	}
	return devices.Works(sup), sup, nil
}

// intFlag reads an integer flag given as text, so that a malformed value
// gets the same message as an out-of-range one: the valid range.
func intFlag(c *cli.Context, name string, lo, hi int) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(c.String(name)))
	switch {
	case err != nil:
		return 0, usagef("--%s %q is not a whole number: give %d..%d", name, c.String(name), lo, hi)
	case n < lo || n > hi:
		return 0, usagef("--%s %q out of range: %d..%d", name, c.String(name), lo, hi)
	}
	return n, nil
}

// noArgs refuses positional arguments where a command takes none.
func noArgs(c *cli.Context) error {
	if c.Args().Len() > 0 {
		return usagef("%s takes no arguments, got %q", commandPath(c), c.Args().First())
	}
	return nil
}

// required refuses a command line that lacks one of flags, or gives it
// empty: checked here, not by the CLI library, which prints the help on
// stdout (where `lava job ... > job.yaml` sends it) and exits 1.
func required(c *cli.Context, needs string, flags ...string) error {
	for _, f := range flags {
		if strings.TrimSpace(c.String(f)) == "" {
			return usagef("%s (--%s is missing or empty)", needs, f)
		}
	}
	return nil
}

// commandPath names the command c runs as it was typed: "netns create".
func commandPath(c *cli.Context) string {
	var names []string
	for _, ctx := range c.Lineage() {
		if ctx.Command != nil && ctx.Command.Name != "" && ctx.Command.Name != c.App.Name && (len(names) == 0 || names[0] != ctx.Command.Name) {
			names = append([]string{ctx.Command.Name}, names...)
		}
	}
	return strings.Join(names, " ")
}

// targetNetns checks for CAP_NET_ADMIN and opens the namespace that --netns
// names, for the commands that work in one.
func targetNetns(c *cli.Context) (namespace.NS, error) {
	if err := needNetAdmin(); err != nil {
		return namespace.NS{}, err
	}
	return openNetns(c, "netns")
}

// openNetns opens the namespace that flag (--netns, or move's --to) names;
// one that names none is bad input.
func openNetns(c *cli.Context, flag string) (namespace.NS, error) {
	ns, err := namespace.Open(c.String(flag))
	if err != nil {
		err = fmt.Errorf("--%s: %w", flag, err)
	}
	if errors.Is(err, namespace.ErrBad) {
		return ns, usage(err)
	}
	return ns, err
}

// stateDir is where records are kept (DEVBULK_STATE_DIR, for tests and
// for running devbulks side by side).
func stateDir() string {
	if dir := os.Getenv("DEVBULK_STATE_DIR"); dir != "" {
		return dir
	}
	return runs.DefaultDir
}

// checkStateDir refuses a DEVBULK_STATE_DIR that is not an absolute path:
// records kept relative to wherever devbulk happens to be started would be
// lost to the next command started elsewhere.
func checkStateDir() error {
	if dir := os.Getenv("DEVBULK_STATE_DIR"); dir != "" && !filepath.IsAbs(dir) {
		return usagef("DEVBULK_STATE_DIR %q is not an absolute path", dir)
	}
	return nil
}

// mountDir is where `netns create` keeps its namespaces: under the state
// directory when DEVBULK_STATE_DIR names one, else netnsbench's default.
func mountDir() string {
	if dir := stateDir(); dir != runs.DefaultDir {
		return filepath.Join(dir, "netns")
	}
	return namespace.DefaultPinDir
}

// openStore opens the record store to read and change what it holds, not
// to make it (runs.OpenExisting).
func openStore() (*runs.Store, error) { return runs.OpenExisting(stateDir()) }

// makeStore opens the record store for a create, making it if missing.
func makeStore() (*runs.Store, error) { return runs.Open(stateDir()) }

// recorded is what a create, a delete or a move of recorded runs works with: the
// namespace --netns names, the record store, and a netlink socket in that
// namespace.
type recorded struct {
	ns    namespace.NS
	store *runs.Store
	conn  *nlbatch.Conn
}

// onRecorded opens what a create, a delete or a move works with (the store
// by open) and calls do; all is closed after.
func onRecorded(c *cli.Context, open func() (*runs.Store, error), do func(recorded) error) error {
	ns, err := targetNetns(c)
	if err != nil {
		return err
	}
	defer ns.Close()
	store, err := open()
	if err != nil {
		return err
	}
	conn, err := nlbatch.Dial(ns.Handle, nlbatch.Options{})
	if err != nil {
		return err
	}
	defer conn.Close()
	return do(recorded{ns: ns, store: store, conn: conn})
}

// warnBad reports record files that are not records, once per command.
func warnBad(c *cli.Context, bad []runs.Bad) {
	for _, b := range bad {
		fmt.Fprintf(c.App.ErrWriter, "devbulk: ignoring %v (devbulk cleanup moves it aside)\n", b.Err)
	}
}

// isTerminal reports whether fd is a terminal. A VM guest's outputs are
// serial ports, terminals that nobody watches.
func isTerminal(fd int) bool {
	if vm.IsGuest() {
		return false
	}
	_, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	return err == nil
}
