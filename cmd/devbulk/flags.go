package main

import (
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/devbulk/devbulk/batch"
	"github.com/devbulk/devbulk/devices"
)

var (
	kindFlag = &cli.StringFlag{Name: "kind", Usage: "link kind `K`: " + strings.Join(devices.Names(), ", ") + " (devbulk kinds: which this kernel has)"}
	upFlag   = &cli.BoolFlag{Name: "up", Usage: "create the links administratively up"}
	// fitFlag overrides the kernel memory estimate (devices.Fits).
	fitFlag  = &cli.BoolFlag{Name: "force", Usage: "create even when the devices' estimated kernel memory exceeds MemAvailable"}
	jsonFlag = &cli.BoolFlag{Name: "json", Usage: "print the result document as JSON"}

	vlanProtoFlag  = &cli.StringFlag{Name: "vlan-proto", Value: "802.1Q", Usage: "vlan protocol: 802.1Q or 802.1ad"}
	remoteBaseFlag = &cli.StringFlag{Name: "remote-base", Value: devices.DefaultRemoteBase.String(),
		Usage: "first tunnel remote (ipip, gre, gretap); link i gets base+i, inside 198.18.0.0/15"}
	traceRCUFlag = &cli.BoolFlag{Name: "trace-rcu", Usage: "count RCU waits and unregister batches per delete phase (kprobes: in devbulk vm, or where tracing is allowed)"}
	profileFlag  = &cli.BoolFlag{Name: "profile", Usage: "break each phase's time down by kernel function: the create phase's registration (names, sysfs, notifiers, sysctls), the delete phase's unregister work and waits " +
		"(function_graph, filtered; in devbulk vm, or where tracing is allowed)"}
	workersFlag = &cli.StringFlag{Name: "workers", Value: "4", Usage: "workers of the parallel strategies, delete or move (1..64)"}
	explainFlag = &cli.BoolFlag{Name: "explain", Usage: "after the result, say how its figures were taken"}
	windowFlag  = &cli.StringFlag{Name: "window", Usage: "group strategy: delete `W` devices per request (1.." + strconv.Itoa(maxWindow) + "), " +
		"each window marked, checked and deleted by group, the kernel's lock released between windows; bench takes W[,W..] and all (the whole set at once), each a strategy of its own (group-wW)"}
)

// maxWindow bounds --window: the largest count of any kind.
const maxWindow = 1000000

// kindOf parses --kind.
func kindOf(c *cli.Context) (*devices.Kind, error) {
	if c.String("kind") == "" {
		return nil, usagef("--kind is required (valid: %s)", strings.Join(devices.Names(), ", "))
	}
	k, err := devices.Lookup(c.String("kind"))
	if err != nil {
		return nil, usage(err)
	}
	return k, nil
}

// counts parses a comma-separated list of counts for kind k: each a whole
// number in range, none twice.
func counts(s string, k *devices.Kind) ([]int, error) {
	return countsFor(s, k.Name, k.MaxCount)
}

// countsFor parses --count for a kind (who, in messages) that takes up
// to most links.
func countsFor(s, who string, most int) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, usagef("--count is required: the number of links, 1..%d for %s", most, who)
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		switch {
		case err != nil:
			return nil, usagef("--count %q is not a whole number: %s takes 1..%d", f, who, most)
		case n <= 0 || n > most:
			return nil, usagef("--count %q out of range: %s takes 1..%d", f, who, most)
		case slices.Contains(out, n):
			return nil, usagef("--count %s gives %d twice", s, n)
		}
		out = append(out, n)
	}
	return out, nil
}

// deleteStrategies parses a comma-separated list of delete strategies
// (bench validates them against the kind it runs).
func deleteStrategies(s string) ([]batch.DeleteStrategy, error) {
	var out []batch.DeleteStrategy
	for _, f := range strings.Split(s, ",") {
		d, err := parseDelete(strings.TrimSpace(f))
		if err != nil {
			return nil, err
		}
		if slices.Contains(out, d) {
			return nil, usagef("--delete %s gives %s twice (auto is group)", s, d)
		}
		out = append(out, d)
	}
	return out, nil
}

// parseDelete parses a delete strategy (auto is group).
func parseDelete(s string) (batch.DeleteStrategy, error) {
	d, err := batch.ParseDelete(s)
	if err != nil {
		return "", usage(err)
	}
	return d, nil
}

// deviceOptions parses the kind options shared by bench and create.
func deviceOptions(c *cli.Context, k *devices.Kind, prefix string, count int) (devices.Options, error) {
	o := devices.Options{Count: count, Prefix: prefix, Up: c.Bool("up"), VlanProto: c.String("vlan-proto")}
	base, err := netip.ParseAddr(c.String("remote-base"))
	if err != nil {
		return o, usagef("--remote-base %q: not an IPv4 address", c.String("remote-base"))
	}
	o.RemoteBase = base
	// A kind's own flags are refused for other kinds, as --parent is.
	if c.IsSet("remote-base") && !k.Remotes {
		return o, usagef("--remote-base applies to tunnels (ipip, gre, gretap), not %s", k.Name)
	}
	if c.IsSet("vlan-proto") && !k.VlanProtos {
		return o, usagef("--vlan-proto applies to vlan, not %s", k.Name)
	}
	if err := k.Validate(o); err != nil {
		return o, usage(err)
	}
	return o, nil
}

// workers parses --workers into the parallel strategies' own options (nil
// where no strategy given is parallel): it is refused there, as the kinds'
// own flags are.
func workers(c *cli.Context, parallel bool) (batch.Own, error) {
	if !parallel {
		if c.IsSet("workers") {
			return nil, usagef("--workers applies to the parallel strategies only")
		}
		return nil, nil
	}
	n, err := intFlag(c, "workers", 1, 64)
	return batch.ParallelOptions{Workers: n}, err
}

// moveList names the move strategies, for a flag's usage.
func moveList() string {
	var names []string
	for _, m := range batch.MoveStrategies() {
		names = append(names, string(m))
	}
	return strings.Join(names, ", ")
}

// strategyList names the delete strategies, but those excepted, for a
// flag's usage.
func strategyList(except ...batch.DeleteStrategy) string {
	var names []string
	for _, d := range batch.DeleteStrategies() {
		if !slices.Contains(except, d) {
			names = append(names, string(d))
		}
	}
	return strings.Join(append(names, "auto"), ", ")
}

// windows parses --window into the group strategy's windows (0: the whole
// set, "all"); list: bench's list, else one window. It is refused where
// the strategies given have no group.
func windows(c *cli.Context, group, list bool) ([]int, error) {
	v := c.String("window")
	if v == "" {
		return nil, nil
	}
	if !group {
		return nil, usagef("--window applies to the group strategy only")
	}
	var out []int
	for _, f := range strings.Split(v, ",") {
		w, err := strconv.Atoi(f)
		switch {
		case list && f == "all":
			w = 0
		case err != nil || w < 1 || w > maxWindow:
			return nil, usagef("--window %q: %q is not a window: give 1..%d devices%s", v, f, maxWindow, map[bool]string{true: ", or all", false: ""}[list])
		}
		if slices.Contains(out, w) {
			return nil, usagef("--window %s gives %s twice", v, f)
		}
		out = append(out, w)
	}
	if !list && len(out) > 1 {
		return nil, usagef("--window %q: give one window", v)
	}
	return out, nil
}
