package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/devbulk/devbulk/batch"
	"github.com/devbulk/devbulk/devices"
	"github.com/devbulk/devbulk/vm"
	"github.com/urfave/cli/v2"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
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
	works := map[string]bool{}
	for _, s := range sup {
		works[s.Kind.Name] = s.OK
	}
	return works, sup, nil
}

// requireKind fails with exit 4 when this kernel cannot create kind k.
func requireKind(k *devices.Kind, sup []devices.Support) error {
	for _, s := range sup {
		if s.Kind == k && !s.OK {
			return fmt.Errorf("%w: %s: %s", batch.ErrUnsupported, k.Name, s.Reason)
		}
	}
	return nil
}

// intFlag reads an integer flag given as text, so that a malformed value
// gets the same message as an out-of-range one: the valid range.
func intFlag(c *cli.Context, name string, lo, hi int) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(c.String(name)))
	if err != nil || n < lo || n > hi {
		return 0, usagef("--%s %q out of range: %d..%d", name, c.String(name), lo, hi)
	}
	return n, nil
}

// noArgs refuses positional arguments where a command takes none.
func noArgs(c *cli.Context) error {
	if c.Args().Len() > 0 {
		return usagef("%s takes no arguments, got %q", c.Command.Name, c.Args().First())
	}
	return nil
}

// targetNetns checks for CAP_NET_ADMIN and opens the namespace that --netns
// names, for the commands that work in one.
func targetNetns(c *cli.Context) (netns.NsHandle, uint64, error) {
	if err := needNetAdmin(); err != nil {
		return 0, 0, err
	}
	return namespace(c.String("netns"))
}

// namespace opens the namespace named by --netns: "current" or a name made
// by `ip netns add`. It returns the handle and its inode.
func namespace(name string) (netns.NsHandle, uint64, error) {
	var h netns.NsHandle
	var err error
	switch name {
	case "":
		return 0, 0, usagef("--netns is required: a name from `ip netns list`, or \"current\" to work in devbulk's own namespace")
	case "current":
		h, err = netns.GetFromPath("/proc/self/ns/net")
	default:
		h, err = netns.GetFromName(name)
		if err != nil {
			return 0, 0, usagef("netns %q not found under /run/netns (create it with `ip netns add %s`)", name, name)
		}
	}
	if err != nil {
		return 0, 0, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(h), &st); err != nil {
		h.Close()
		return 0, 0, err
	}
	return h, st.Ino, nil
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
