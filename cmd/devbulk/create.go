package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/devbulk/devbulk/batch"
	"github.com/devbulk/devbulk/devices"
	"github.com/devbulk/devbulk/internal/result"
	"github.com/devbulk/devbulk/nlbatch"
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
			upFlag, vlanProtoFlag, remoteBaseFlag, jsonFlag,
		},
		Action: create,
	}
}

func create(c *cli.Context) error {
	if err := noArgs(c); err != nil {
		return err
	}
	k, err := kindOf(c)
	if err != nil {
		return err
	}
	n, err := counts(c.String("count"), k)
	if err != nil {
		return err
	}
	if len(n) != 1 {
		return usagef("create takes one --count, got %q", c.String("count"))
	}
	dev, err := deviceOptions(c, k, c.String("prefix"), n[0])
	if err != nil {
		return err
	}
	strategy, err := batch.ParseCreate(c.String("strategy"))
	if err != nil {
		return usage(err)
	}
	var parents []string
	if p := c.String("parent"); p != "" {
		if !k.NeedsLower {
			return usagef("--parent applies to kinds with a lower device (vlan, macvlan), not %s", k.Name)
		}
		parents = strings.Split(p, ",")
	}
	ns, ino, err := targetNetns(c)
	if err != nil {
		return err
	}
	defer ns.Close()
	works, sup, err := support(k)
	if err != nil {
		return err
	}
	if err := devices.Require(sup, k); err != nil {
		return err
	}
	store, err := openStore()
	if err != nil {
		return err
	}
	bad, stale, err := store.Survey()
	if err != nil {
		return err
	}
	warnBad(c, bad)
	warnStale(c, stale)
	conn, err := nlbatch.Dial(ns, nlbatch.Options{})
	if err != nil {
		return err
	}
	defer conn.Close()
	p, rec, err := store.Create(c.Context, conn, batch.CreateOptions{
		Kind: k, Devices: dev, Strategy: strategy, Parents: parents, Lower: devices.LowerKind(works),
		NS: ns, Netns: c.String("netns"),
	}, ino)
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return json.NewEncoder(c.App.Writer).Encode(struct {
			Phase  batch.Phase  `json:"create"`
			Record *runs.Record `json:"record"`
		}{p, rec})
	}
	fmt.Fprintf(c.App.Writer, "created %d %s links %s..%s in netns %s (group %d) in %s: %.3f ms/device\n",
		len(rec.Links), k.Name, rec.Links[0].Name, rec.Links[len(rec.Links)-1].Name, rec.Netns, rec.Group,
		result.FormatNS(p.WallNS), p.MsPerDevice)
	return nil
}
