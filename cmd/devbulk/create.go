package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/devbulk/devbulk/batch"
	"github.com/devbulk/devbulk/bench"
	"github.com/devbulk/devbulk/bystander"
	"github.com/devbulk/devbulk/devices"
	"github.com/devbulk/devbulk/internal/result"
	"github.com/devbulk/devbulk/kernlog"
	"github.com/devbulk/devbulk/runs"
)

var (
	netnsFlag = &cli.StringFlag{Name: "netns", Usage: "namespace: a `NAME` from `ip netns list`, a path to a namespace file (/proc/PID/ns/net), or \"current\" for devbulk's own"}
)

func createCommand() *cli.Command {
	return &cli.Command{
		Name:  "create",
		Usage: "create links in a named netns and record them as devbulk's",
		Flags: []cli.Flag{
			netnsFlag, kindFlag,
			&cli.StringFlag{Name: "count", Usage: "number of links"},
			&cli.StringFlag{Name: "prefix", Value: "dbk", Usage: "name prefix: links are PREFIX0..PREFIX(N-1)"},
			&cli.StringFlag{Name: "parent", Usage: "vlan/macvlan: existing lower `DEV[,DEV..]` (default: devbulk creates PREFIXl0..)"},
			&cli.StringFlag{Name: "strategy", Value: "pipelined", Usage: "create strategy: serial or pipelined"},
			upFlag, fitFlag, vlanProtoFlag, remoteBaseFlag, bystanderFlag, kernelNoiseFlag, jsonFlag, quietFlag,
		},
		Action: create,
	}
}

func create(c *cli.Context) error {
	o, err := createOptionsOf(c)
	if err != nil {
		return err
	}
	w, err := watchingOf(c, false)
	if err != nil {
		return err
	}
	surveyed := func() (*runs.Store, error) { return surveyedStore(c) }
	return onRecorded(c, surveyed, func(rs recorded) error {
		o.NS = rs.ns
		// The kinds are probed (in a scratch namespace) only where a lower
		// kind must be chosen, or once the kernel did not know the kind
		// (Store.Create): a scripted create costs what its requests cost.
		if o.Kind.NeedsLower && len(o.Parents) == 0 {
			var err error
			if o.Lower, err = devices.Ready(o.Kind); err != nil {
				return err
			}
		}
		if mk := counter(c); mk != nil {
			o.Progress = mk("create "+o.Kind.Name, o.Devices.Count)
		}
		var p bench.Phase
		var rec *runs.Record
		seen, err := watched(c, w, func() (err error) {
			p.Phase, rec, err = rs.store.Create(c.Context, rs.conn, o)
			return err
		})
		if err != nil {
			return seen.failing(c, err)
		}
		p.Bystander = seen.during
		return printCreated(c, p, rec, seen)
	})
}

// surveyedStore opens the store and warns of its malformed records.
func surveyedStore(c *cli.Context) (*runs.Store, error) {
	store, err := makeStore()
	if err != nil {
		return nil, err
	}
	bad, err := store.Survey()
	if err != nil {
		return nil, err
	}
	warnBad(c, bad)
	return store, nil
}

// createOptionsOf reads the create's flags (the namespace is opened apart).
func createOptionsOf(c *cli.Context) (batch.CreateOptions, error) {
	o := batch.CreateOptions{Force: c.Bool("force")}
	if err := noArgs(c); err != nil {
		return o, err
	}
	var err error
	if o.Kind, err = kindOf(c); err != nil {
		return o, err
	}
	n, err := counts(c.String("count"), o.Kind)
	if err != nil {
		return o, err
	}
	if len(n) != 1 {
		return o, usagef("create takes one --count, got %q", c.String("count"))
	}
	if o.Devices, err = deviceOptions(c, o.Kind, c.String("prefix"), n[0]); err != nil {
		return o, err
	}
	if o.Strategy, err = batch.ParseCreate(c.String("strategy")); err != nil {
		return o, usage(err)
	}
	if p := c.String("parent"); p != "" {
		if !o.Kind.NeedsLower {
			return o, usagef("--parent applies to kinds with a lower device (vlan, macvlan), not %s", o.Kind.Name)
		}
		o.Parents = strings.Split(p, ",")
	}
	return o, nil
}

func printCreated(c *cli.Context, p bench.Phase, rec *runs.Record, seen watch) error {
	clearProgress()
	if c.Bool("json") {
		err := json.NewEncoder(c.App.Writer).Encode(struct {
			Phase     bench.Phase      `json:"create"`
			Record    *runs.Record     `json:"record"`
			Idle      *bystander.Stats `json:"bystander_idle,omitempty"`
			KernelLog *kernlog.Summary `json:"kernel_log"`
		}{p, rec, seen.idle, seen.kernel})
		return seen.verdict(c, err)
	}
	fmt.Fprintf(c.App.Writer, "created %d %s links %s..%s in netns %s (group %d) in %s: %.3f ms/device\n",
		len(rec.Links), rec.Kind, rec.Links[0].Name, rec.Links[len(rec.Links)-1].Name, rec.Netns, rec.Group,
		result.FormatNS(p.WallNS), p.MsPerDevice)
	if w := p.WaitNote(); w != "" {
		fmt.Fprintf(c.App.Writer, "  %s\n", w)
	}
	if seen.idle != nil {
		fmt.Fprintf(c.App.Writer, "  %s\n", bystander.Line(seen.idle, p.Bystander, "the create"))
	}
	seen.saysKernel(c.App.Writer)
	return seen.verdict(c, nil)
}
