package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/devbulk/devbulk/runs"
)

func runsCommand() *cli.Command {
	return &cli.Command{
		Name:  "runs",
		Usage: "list the runs devbulk has recorded (create, and any devbulk killed while it worked): where they are, in what state, and whether their devbulk still runs",
		Description: "Reads the records in the state directory (DEVBULK_STATE_DIR, default " + runs.DefaultDir + ") and changes nothing.\n" +
			"A run that is not complete and whose devbulk no longer runs was killed: `devbulk cleanup` finishes it.",
		Flags:  []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "one JSON document: {\"runs\": [...]}"}},
		Action: listRuns,
	}
}

func listRuns(c *cli.Context) error {
	if err := noArgs(c); err != nil {
		return err
	}
	list, bad, err := recordedRuns()
	if err != nil {
		return err
	}
	warnBad(c, bad)
	if c.Bool("json") {
		return json.NewEncoder(c.App.Writer).Encode(map[string][]runs.Listed{"runs": list})
	}
	if len(list) == 0 {
		fmt.Fprintf(c.App.Writer, "no devbulk runs recorded (in %s)\n", stateDir())
		return nil
	}
	return printRuns(c.App.Writer, list, time.Now())
}

// recordedRuns lists the store's runs.
func recordedRuns() ([]runs.Listed, []runs.Bad, error) {
	store, err := openStore()
	if err != nil {
		return nil, nil, err
	}
	return store.List()
}

func printRuns(w io.Writer, list []runs.Listed, now time.Time) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PREFIX\tKIND\tDEVICES\tGROUP\tNETNS\tSTATE\tDEVBULK\tAGE")
	killed, stale := 0, 0
	for _, l := range list {
		if l.Stale {
			stale++
		}
		state := string(l.State)
		if l.Abandoned {
			state = "abandoned"
		}
		if (!l.Running || l.Dying) && (l.State != runs.Complete || l.Abandoned) {
			state += " (killed)"
			killed++
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n", l.Prefix, l.Kind, devicesOf(l), l.Group, where(l), state, devbulkOf(l), age(l.Created, now))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if killed > 0 {
		fmt.Fprintf(w, "%d run(s) whose devbulk was killed mid-way: `devbulk cleanup` finishes them\n", killed)
	}
	if stale > 0 {
		fmt.Fprintf(w, "%d stale record(s): their namespace is gone, and their devices with it: `devbulk cleanup` prunes them\n", stale)
	}
	return nil
}

// where names a run's namespace; both while a move is under way (or was
// killed) and, with their devices, when a move left the run on both sides.
func where(l runs.Listed) string {
	side := func(s runs.Side) string {
		if s.Gone {
			return s.Netns + " (gone)"
		}
		return s.Netns
	}
	switch {
	case l.To == nil:
		return side(l.Netns)
	case l.State == runs.Moving: // where each link is is known once cleanup or move looks
		return side(l.Netns) + " -> " + side(*l.To)
	}
	return fmt.Sprintf("%s (%d) + %s (%d)", side(l.Netns), l.Netns.Devices, side(*l.To), l.To.Devices)
}

// devicesOf is the run's device count: what its record holds, or, for a
// run killed while creating, what is in its namespace now.
func devicesOf(l runs.Listed) string {
	switch {
	case l.Found == nil:
		return strconv.Itoa(l.Devices)
	case *l.Found < 0:
		return "unknown"
	}
	return fmt.Sprintf("%d found", *l.Found)
}

func devbulkOf(l runs.Listed) string {
	if l.Dying {
		return fmt.Sprintf("killed, exiting (pid %d)", l.PID)
	}
	if l.Running {
		return fmt.Sprintf("running (pid %d)", l.PID)
	}
	return "exited"
}

// age is how long ago a run was created, in its two largest units (42s,
// 5m10s, 3h12m, 2d3h); "-" for records that do not say.
func age(created, now time.Time) string {
	if created.IsZero() {
		return "-"
	}
	s := int64(now.Sub(created) / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", max(s, 0))
	case s < 3600:
		return fmt.Sprintf("%dm%ds", s/60, s%60)
	case s < 86400:
		return fmt.Sprintf("%dh%dm", s/3600, s%3600/60)
	}
	return fmt.Sprintf("%dd%dh", s/86400, s%86400/3600)
}
