package main

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/devbulk/devbulk"
	"github.com/devbulk/devbulk/batch"
	"github.com/devbulk/devbulk/internal/result"
	"github.com/devbulk/devbulk/runs"
)

func moveCommand() *cli.Command {
	return &cli.Command{
		Name:  "move",
		Usage: "move the links devbulk created in a netns into another, alive (ip link set DEV netns X); their records follow them",
		Description: "Every move is the kernel's __dev_change_net_namespace, one device at a time, each waiting for RCU\n" +
			"(two synchronize_net and an rcu_barrier): the strategies differ only in how the requests reach the kernel.\n" +
			"A move that takes only part of a run (interrupted, or refused for some devices) leaves the record on both\n" +
			"sides: move again to finish it, or delete either side with `devbulk delete --netns`.",
		Flags: []cli.Flag{
			netnsFlag,
			&cli.StringFlag{Name: "to", Usage: "the namespace to move them into: a `NAME`, a path or \"current\", as for --netns"},
			&cli.StringFlag{Name: "strategy", Value: string(batch.MovePipelined), Usage: "how the requests reach the kernel: " + moveList()},
			prefixChoice, kindChoice, notFoundOK, forceFlag("move"), workersFlag, bystanderFlag, kernelNoiseFlag, jsonFlag, quietFlag,
		},
		Action: moveAction,
	}
}

func moveAction(c *cli.Context) error {
	o, err := moveOptionsOf(c)
	if err != nil {
		return err
	}
	w, err := watchingOf(c, false)
	if err != nil {
		return err
	}
	if o.To, err = openNetns(c, "to"); err != nil {
		return err
	}
	defer o.To.Close()
	return onRecorded(c, openStore, func(rs recorded) error {
		o.NS = rs.ns
		var rep *runs.Report
		seen, err := watched(c, w, func() (err error) {
			rep, err = rs.store.Move(c.Context, rs.conn, o)
			return err
		})
		if err != nil {
			return seen.failing(c, err)
		}
		return printReport(c, rep, "move", printMoved, seen)
	})
}

// moveOptionsOf reads the move's flags (the namespaces are opened apart).
func moveOptionsOf(c *cli.Context) (runs.MoveOptions, error) {
	o := runs.MoveOptions{Prefix: c.String("prefix"), Kind: c.String("kind"), Force: c.Bool("force")}
	if err := noArgs(c); err != nil {
		return o, err
	}
	if err := checkKindChoice(c); err != nil {
		return o, err
	}
	if c.String("to") == "" {
		return o, usagef("move needs --to: the namespace to move the links into")
	}
	var err error
	if o.Strategy, err = batch.ParseMove(c.String("strategy")); err != nil {
		return o, usage(err)
	}
	o.Progress = runsProgress(c, "move")
	o.Own, err = workers(c, o.Strategy == batch.MoveParallel)
	return o, err
}

// printMoved says what the kernel confirmed moved, what is left, and where
// the record now has the run.
func printMoved(c *cli.Context, o runs.Outcome) {
	p, r, w := o.Phase, o.Record, c.App.Writer
	switch {
	case errors.Is(o.Err, runs.ErrRunning):
		return // the error says it
	case c.Context.Err() != nil:
		fmt.Fprintf(w, "interrupted: moved %d of %d %s links %s* into netns %s by %s\n", p.Moved, p.Devices, r.Kind, r.Prefix, c.String("to"), p.Strategy)
	case p.Moved == 0:
		fmt.Fprintf(w, "moved none of %d %s links %s*\n", p.Devices, r.Kind, r.Prefix)
	default:
		fmt.Fprintf(w, "moved %d of %d %s links %s* into netns %s by %s in %s: %.3f ms/device\n",
			p.Moved, p.Devices, r.Kind, r.Prefix, c.String("to"), p.Strategy, result.FormatNS(p.WallNS), p.MsPerDevice)
	}
	if o.Stopped {
		fmt.Fprintf(w, "  its devbulk (%s) was still running: stopped (--force) before the move\n", r.Owner)
	}
	printLeft(w, p.Left)
	switch {
	case o.Removed:
		fmt.Fprintln(w, "  nothing of the run is left: its record is removed")
	case r.To != nil:
		fmt.Fprintf(w, "  the record keeps both sides: %s in netns %s, %s in netns %s; move again to finish, or delete either side\n",
			devbulk.Plural(len(r.Links), "device"), r.Netns, devbulk.Plural(len(r.To.Links), "device"), r.To.Netns)
	case p.Moved > 0:
		fmt.Fprintf(w, "  the record follows: %s\n", r)
	}
}
