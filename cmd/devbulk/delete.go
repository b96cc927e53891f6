package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/urfave/cli/v2"

	"github.com/devbulk/devbulk"
	"github.com/devbulk/devbulk/batch"
	"github.com/devbulk/devbulk/bench"
	"github.com/devbulk/devbulk/bystander"
	"github.com/devbulk/devbulk/devices"
	"github.com/devbulk/devbulk/internal/result"
	"github.com/devbulk/devbulk/runs"
)

func deleteCommand() *cli.Command {
	return &cli.Command{
		Name:  "delete",
		Usage: "delete every link devbulk created in a netns (and nothing else)",
		Flags: []cli.Flag{
			netnsFlag,
			&cli.StringFlag{Name: "strategy", Value: "auto", Usage: strategyList(batch.DeleteNetns) + " (auto: group)"},
			prefixChoice, kindChoice, notFoundOK, forceFlag("delete"),
			&cli.BoolFlag{Name: "forget-renamed", Usage: "drop devices someone else renamed from the record (naming them; they are not deleted), so that the rest of the run can go"},
			workersFlag, windowFlag, bystanderFlag, kernelNoiseFlag, jsonFlag, quietFlag,
		},
		Action: deleteAction,
	}
}

func deleteAction(c *cli.Context) error {
	o, err := deleteOptionsOf(c)
	if err != nil {
		return err
	}
	w, err := watchingOf(c, false)
	if err != nil {
		return err
	}
	if w.by != nil && o.Strategy.UnloadsModules() {
		return usagef("--bystander and --strategy module: the unload would take the prober's devices too (devbulk rmmod --bystander keeps them apart)")
	}
	o.Progress = runsProgress(c, "delete")
	return onRecorded(c, openStore, func(rs recorded) error {
		o.NS = rs.ns
		if say := progress(c); say != nil && o.Strategy.OneBatch() {
			say(fmt.Sprintf("deleting by %s: one request per run, the kernel's batch (nothing to count)", c.String("strategy")))
		}
		var rep *runs.Report
		seen, err := watched(c, w, func() (err error) {
			rep, err = rs.store.Delete(c.Context, rs.conn, o)
			return err
		})
		if err != nil {
			return seen.failing(c, err)
		}
		return printReport(c, rep, "delete", printDeleted, seen)
	})
}

// deleteOptionsOf reads the delete's flags (the namespace is opened apart).
func deleteOptionsOf(c *cli.Context) (runs.DeleteOptions, error) {
	o := runs.DeleteOptions{Prefix: c.String("prefix"), Kind: c.String("kind"),
		Force: c.Bool("force"), ForgetRenamed: c.Bool("forget-renamed")}
	if err := noArgs(c); err != nil {
		return o, err
	}
	var err error
	if o.Strategy, err = parseDelete(c.String("strategy")); err != nil {
		return o, err
	}
	if err := checkKindChoice(c); err != nil {
		return o, err
	}
	if o.Own, err = workers(c, o.Strategy == batch.DeleteParallel); err != nil {
		return o, err
	}
	w, err := windows(c, o.Strategy == batch.DeleteGroup, false)
	if len(w) == 1 {
		o.Own = batch.GroupOptions{Window: w[0]}
	}
	return o, err
}

// The flags that choose which recorded runs of the namespace a delete or a
// move takes, and what it does with a run whose devbulk still runs.
var (
	prefixChoice = &cli.StringFlag{Name: "prefix", Usage: "only the run made with --prefix `P`"}
	kindChoice   = &cli.StringFlag{Name: "kind", Usage: "only runs of kind `K`"}
	// notFoundOK lets idempotent scripts name runs that may be gone, as
	// kubectl delete --ignore-not-found does.
	notFoundOK = &cli.BoolFlag{Name: "ignore-not-found", Usage: "exit 0 when --prefix or --kind matches no run (by default exit 1: a typo is not a success)"}
)

func forceFlag(verb string) cli.Flag {
	return &cli.BoolFlag{Name: "force", Usage: "stop (SIGKILL) a devbulk that still runs a run, then " + verb + " the run"}
}

// checkKindChoice refuses a --kind devbulk does not know.
func checkKindChoice(c *cli.Context) error {
	if k := c.String("kind"); k != "" {
		if _, err := devices.Lookup(k); err != nil {
			return usage(err)
		}
	}
	return nil
}

// printReport prints what each run's delete or move (key: "delete" or
// "move", the JSON's key too) did, each by print; its error is the
// report's, and says so when malformed records that may be of this
// namespace were ignored.
func printReport(c *cli.Context, rep *runs.Report, key string, print func(*cli.Context, runs.Outcome), w watch) error {
	clearProgress()
	warnBad(c, rep.BadElsewhere)
	warnBad(c, rep.Bad)
	if len(rep.Runs) == 0 {
		return noneMatched(c, rep.Unmatched, w)
	}
	if c.Bool("json") {
		phases := make([]bench.Phase, len(rep.Runs))
		for i, o := range rep.Runs {
			phases[i] = bench.Phase{Phase: o.Phase, Bystander: w.during} // the whole command's window
		}
		doc := map[string]any{key: phases, "kernel_log": w.kernel}
		if w.idle != nil {
			doc["bystander_idle"] = w.idle
		}
		if err := json.NewEncoder(c.App.Writer).Encode(doc); err != nil {
			return err
		}
	} else {
		for _, o := range rep.Runs {
			print(c, o)
		}
		if w.idle != nil {
			fmt.Fprintf(c.App.Writer, "%s\n", bystander.Line(w.idle, w.during, "the "+key))
		}
		w.saysKernel(c.App.Writer)
	}
	err := rep.Err()
	if len(rep.Bad) > 0 {
		// They may be runs of this namespace, untouched: say so in the
		// exit status too.
		err = errors.Join(err, fmt.Errorf("%d malformed records that may be of this namespace ignored, their devices not %sd (see above)", len(rep.Bad), key))
	}
	return w.verdict(c, err)
}

// noneMatched says that no run was deleted or moved, and why, with what
// the kernel complained of meanwhile; a selection that matched nothing is
// exit 1 unless --ignore-not-found.
func noneMatched(c *cli.Context, unmatched []*runs.Record, w watch) error {
	printNoneMatched(c, unmatched)
	w.saysKernel(c.App.ErrWriter)
	if (c.String("prefix") != "" || c.String("kind") != "") && !c.Bool("ignore-not-found") {
		return w.verdict(c, &exitError{exitFailed, errSilent}) // a typo is not a success
	}
	return w.verdict(c, nil)
}

// printNoneMatched says that no run was deleted, and why: none recorded in
// the namespace, or none that --prefix and --kind chose.
func printNoneMatched(c *cli.Context, unmatched []*runs.Record) {
	if len(unmatched) == 0 {
		fmt.Fprintf(c.App.ErrWriter, "devbulk: no devbulk runs recorded in netns %s (`devbulk runs` lists every run in %s)\n", c.String("netns"), stateDir())
		return
	}
	var names []string
	for _, r := range unmatched {
		names = append(names, fmt.Sprintf("--prefix %s (%s)", r.Prefix, r.Kind))
	}
	fmt.Fprintf(c.App.ErrWriter, "devbulk: no devbulk run in netns %s matches%s%s; recorded there: %s\n", c.String("netns"),
		optional(" --prefix ", c.String("prefix")), optional(" --kind ", c.String("kind")), strings.Join(names, ", "))
}

func optional(flag, value string) string {
	if value == "" {
		return ""
	}
	return flag + value
}

// printLeft says what became of the devices a delete did not remove.
func printLeft(w io.Writer, left []batch.Leftover) {
	for _, line := range batch.Summarize(left) {
		fmt.Fprintf(w, "  left: %s\n", line)
	}
}

// printDeleted says what the kernel confirmed deleted, and what is left.
func printDeleted(c *cli.Context, o runs.Outcome) {
	p, r := o.Phase, o.Record
	switch {
	case errors.Is(o.Err, runs.ErrRunning):
		return // the error says it
	case c.Context.Err() != nil:
		fmt.Fprintf(c.App.Writer, "interrupted: deleted %d of %d %s links %s* by %s\n", p.Deleted, p.Devices, r.Kind, r.Prefix, p.Strategy)
	case p.Deleted == 0:
		fmt.Fprintf(c.App.Writer, "deleted none of %d %s links %s*\n", p.Devices, r.Kind, r.Prefix)
	default:
		fmt.Fprintf(c.App.Writer, "deleted %d of %d %s links %s* by %s in %s: %.3f ms/device\n",
			p.Deleted, p.Devices, r.Kind, r.Prefix, p.Strategy, result.FormatNS(p.WallNS), p.MsPerDevice)
		if w := p.WaitNote(); w != "" {
			fmt.Fprintf(c.App.Writer, "  %s\n", w)
		}
	}
	if o.Stopped {
		fmt.Fprintf(c.App.Writer, "  its devbulk (%s) was still running: stopped (--force) before the delete\n", r.Owner)
	}
	printLeft(c.App.Writer, p.Left)
	for _, l := range o.Forgotten {
		fmt.Fprintf(c.App.Writer, "  forgotten (--forget-renamed): %s, renamed to %s, is no longer in the record and was not deleted\n", l.Link.Name, l.RenamedTo)
	}
	if renamed(p.Left) && !c.Bool("forget-renamed") {
		fmt.Fprintln(c.App.Writer, "  renamed devices are not deleted: rename them back, delete them yourself, or run delete again with --forget-renamed")
	}
	if len(o.Siblings) > 0 {
		fmt.Fprintf(c.App.Writer, "  %s\n", runs.SiblingsGone(o.Siblings))
	}
	if len(p.Vanished) > 0 {
		fmt.Fprintf(c.App.Writer, "  not devbulk's, gone during the delete (deleted by someone else, or moved into the run's group and taken along): %s\n",
			strings.Join(p.Vanished, ", "))
	}
	if !o.Removed {
		fmt.Fprintf(c.App.Writer, "  the record of %s stays, for the %s left\n", r, devbulk.Plural(r.Devices(), "device"))
	}
}

// renamed reports whether someone renamed a device of the run.
func renamed(left []batch.Leftover) bool {
	for _, l := range left {
		if l.RenamedTo != "" {
			return true
		}
	}
	return false
}

// runsProgress is a bar per run for a delete or move (verb) by a
// one-by-one strategy (a batch is one request: nothing to count), or nil.
func runsProgress(c *cli.Context, verb string) func(done, total int) {
	mk := counter(c)
	if mk == nil {
		return nil
	}
	var mu sync.Mutex // parallel workers report concurrently
	var bar func(int)
	of, done := -1, false
	return func(n, total int) {
		mu.Lock()
		defer mu.Unlock()
		if bar == nil || total != of || done { // the next run
			bar, of = mk(fmt.Sprintf("%s (%s)", verb, c.String("strategy")), total), total
		}
		done = n >= total
		bar(n)
	}
}
