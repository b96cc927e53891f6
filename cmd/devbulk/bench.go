package main

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/devbulk/devbulk/batch"
	"github.com/devbulk/devbulk/bench"
	"github.com/devbulk/devbulk/check"
	"github.com/devbulk/devbulk/devices"
)

func benchCommand() *cli.Command {
	return &cli.Command{
		Name:  "bench",
		Usage: "full create→delete cycles in throwaway network namespaces, timed",
		Description: "Each count × delete strategy × repeat is one cycle in a fresh namespace that only devbulk holds:\n" +
			"if devbulk dies, the kernel removes it with everything inside. Without --kind, the best kind this kernel\n" +
			"has is used (dummy, else ifb).",
		Flags: []cli.Flag{
			kindFlag,
			&cli.StringFlag{Name: "count", Value: "1000", Usage: "links per cycle: `N[,N..]`"},
			&cli.StringFlag{Name: "create", Value: "pipelined", Usage: "create strategy: serial or pipelined"},
			&cli.StringFlag{Name: "delete", Value: "serial,group,netns", Usage: "delete strategies: `S[,S..]` of " + strategyList()},
			&cli.StringFlag{Name: "move", Usage: "after the creation, move the links into a second throwaway namespace, timed as a move phase, " +
				"and delete them there: move strategies `S[,S..]` of " + moveList()},
			&cli.StringFlag{Name: "repeat", Value: "1", Usage: "cycles per count and strategy (1..100)"},
			&cli.StringFlag{Name: "compare", Usage: "also run the same cycles with `iproute2` (ip -batch, ip link del [group])"},
			workersFlag, windowFlag, namespacesFlag, bystanderFlag, influenceFlag, upFlag, fitFlag, vlanProtoFlag, remoteBaseFlag, traceRCUFlag, profileFlag, kernelNoiseFlag, jsonFlag, formatFlag(benchFormats...), svgFlag, quietFlag, explainFlag,
		},
		Action: benchWith(benchOptionsOf),
	}
}

// benchFormats are bench's and rmmod's outputs (benchstat: the Go benchmark
// format, for `benchstat old.txt new.txt`).
var benchFormats = []string{"table", "json", "benchstat"}

// benchWith is the action of a command that is a bench (bench, rmmod):
// its flags read by parse, the kinds resolved, the cycles run and printed.
func benchWith(parse func(*cli.Context) (bench.Options, error)) cli.ActionFunc {
	return func(c *cli.Context) error {
		o, err := parse(c)
		if err != nil {
			return err
		}
		if o.KernelNoise, err = kernelNoise(c); err != nil {
			return err
		}
		if err := needNetAdmin(); err != nil {
			return err
		}
		if err := o.Resolve(); err != nil {
			return err
		}
		return runBench(c, o)
	}
}

// benchOptionsOf reads the bench's flags: everything the command line says
// is checked before the kernel is touched.
func benchOptionsOf(c *cli.Context) (bench.Options, error) {
	o := bench.Options{Up: c.Bool("up"), Force: c.Bool("force"), VlanProto: c.String("vlan-proto"), TraceRCU: c.Bool("trace-rcu"), Profile: c.Bool("profile")}
	if err := noArgs(c); err != nil {
		return o, err
	}
	if _, err := outputFormat(c, benchFormats...); err != nil {
		return o, err
	}
	var err error
	if c.String("kind") != "" {
		if o.Kind, err = kindOf(c); err != nil {
			return o, err
		}
	}
	if o.Create, err = batch.ParseCreate(c.String("create")); err != nil {
		return o, usage(err)
	}
	if o.Repeat, err = intFlag(c, "repeat", 1, 100); err != nil {
		return o, err
	}
	if o.Compare = c.String("compare") == "iproute2"; !o.Compare && c.String("compare") != "" {
		return o, usagef("--compare %q: the only comparison is iproute2", c.String("compare"))
	}
	if err := benchCounts(c, &o); err != nil {
		return o, err
	}
	if o.Deletes, err = deleteStrategies(c.String("delete")); err != nil {
		return o, err
	}
	if err := benchMoves(c, &o); err != nil {
		return o, err
	}
	return o, benchBeside(c, &o)
}

// benchBeside reads what runs beside the cycles' own strategies: the
// parallel strategies' workers and the bystander.
func benchBeside(c *cli.Context, o *bench.Options) error {
	own, err := workers(c, slices.Contains(o.Deletes, batch.DeleteParallel) || slices.Contains(o.Moves, batch.MoveParallel))
	if own != nil {
		o.Own = append(o.Own, own)
	}
	if err != nil {
		return err
	}
	if o.Windows, err = windows(c, slices.Contains(o.Deletes, batch.DeleteGroup), true); err != nil {
		return err
	}
	if len(o.Windows) > 0 && o.Compare {
		return usagef("--window and --compare iproute2: iproute2 has no windowed group delete")
	}
	if o.Bystander, err = bystanderOf(c, o.Compare); err != nil {
		return err
	}
	if o.Influence = c.Bool("bystander-influence"); o.Influence && o.Bystander == nil {
		return usagef("--bystander-influence measures a bystander: give --bystander OP[@RATE]")
	}
	return benchNamespaces(c, o)
}

// benchMoves reads --move: the strategies, each once, and what goes with
// them (no iproute2 twin, no delete of the lower devices, which stay in
// the first namespace).
func benchMoves(c *cli.Context, o *bench.Options) error {
	if c.String("move") == "" {
		return nil
	}
	for _, f := range strings.Split(c.String("move"), ",") {
		m, err := batch.ParseMove(strings.TrimSpace(f))
		if err != nil {
			return usage(err)
		}
		if slices.Contains(o.Moves, m) {
			return usagef("--move %s gives %s twice", c.String("move"), m)
		}
		o.Moves = append(o.Moves, m)
	}
	switch {
	case o.Compare:
		return usagef("--move goes without --compare iproute2: devbulk's moves have no iproute2 twin here")
	case slices.Contains(o.Deletes, batch.DeleteLower):
		return usagef("--move with --delete lower: the lower devices stay in the first namespace; choose other delete strategies")
	}
	return nil
}

// benchCounts reads --count and checks the kind's options at every count,
// against the limits of the kind (the default kinds share theirs).
func benchCounts(c *cli.Context, o *bench.Options) error {
	limits, who := o.Kind, ""
	if limits == nil {
		// The kind is the first of these this kernel has (bench.Options.Resolve).
		kinds := devices.LowerKinds()
		limits = slices.MinFunc(kinds, func(a, b *devices.Kind) int { return a.MaxCount - b.MaxCount })
		who = "without --kind, bench's kind (the first of " + devices.NamesOf(kinds) + " this kernel has)"
	}
	var err error
	if o.Counts, err = countsFor(c.String("count"), cmp.Or(who, limits.Name), limits.MaxCount); err != nil {
		return err
	}
	for _, n := range o.Counts {
		if _, err := deviceOptions(c, limits, bench.Prefix, n); err != nil {
			return err
		}
	}
	return nil
}

// runBench runs the cycles, with progress on a terminal, and prints the
// report of what ran, even when a cycle failed.
func runBench(c *cli.Context, o bench.Options) error {
	o.Progress, o.Counter = progress(c), counter(c)
	report, err := bench.Run(c.Context, o)
	clearProgress()
	if report != nil && len(report.Runs) > 0 {
		werr := writeReport(c, report)
		if werr == nil {
			werr = writeSVG(c, report)
		}
		err = firstSaying(err, werr)
	}
	var seen watch // the bench watched the log itself: its report holds it
	if report != nil {
		seen.kernel = report.KernelLog
	}
	return seen.verdict(c, err)
}

func writeReport(c *cli.Context, r *bench.Report) error {
	f, err := outputFormat(c, benchFormats...)
	if err != nil {
		return err
	}
	switch f {
	case "json":
		return writeJSON(c.App.Writer, r)
	case "benchstat":
		return check.WriteBenchstat(c.App.Writer, false, &check.Results{Meta: check.MetaFor(r.Header, ""),
			Scenarios: []check.Scenario{{Lines: check.BenchLines(r)}}})
	}
	r.Explain = c.Bool("explain")
	return r.WriteTable(c.App.Writer)
}

// namespacesFlag spreads each cycle over several namespaces at once.
var namespacesFlag = &cli.StringFlag{Name: "namespaces", Usage: "spread each cycle's devices over `K[,K..]` namespaces of their own (1..64), " +
	"a worker each, all creating then all deleting at once, and compare each K with 1 (include 1): does the kernel's lock let them run in parallel?"}

// benchNamespaces reads --namespaces: a list of new counts of 1..64 (what
// goes with it is the spread's: bench.Options.Resolve).
func benchNamespaces(c *cli.Context, o *bench.Options) error {
	v := c.String("namespaces")
	if v == "" {
		return nil
	}
	for _, f := range strings.Split(v, ",") {
		k, err := strconv.Atoi(f)
		if err != nil || k < 1 || k > 64 || slices.Contains(o.Namespaces, k) {
			return usagef("--namespaces %q: %q is not a new count of 1..64 namespaces", v, f)
		}
		o.Namespaces = append(o.Namespaces, k)
	}
	return nil
}
