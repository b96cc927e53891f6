package main

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/devbulk/devbulk/batch"
	"github.com/devbulk/devbulk/devices"
	"github.com/devbulk/devbulk/nlbatch"
	"github.com/urfave/cli/v2"
)

func deleteCommand() *cli.Command {
	return &cli.Command{
		Name:  "delete",
		Usage: "delete every link devbulk created in a netns (and nothing else)",
		Flags: []cli.Flag{
			netnsFlag,
			&cli.StringFlag{Name: "strategy", Value: "auto", Usage: "serial, pipelined, parallel, group, lower, module or auto (group)"},
			&cli.StringFlag{Name: "prefix", Usage: "only runs whose prefix starts with `P`"},
			&cli.StringFlag{Name: "kind", Usage: "only runs of kind `K`"},
			workersFlag, jsonFlag,
		},
		Action: deleteAction,
	}
}

func deleteAction(c *cli.Context) error {
	if err := noArgs(c); err != nil {
		return err
	}
	d, err := batch.ParseDelete(c.String("strategy"))
	if err != nil {
		return usage(err)
	}
	if d == batch.DeleteNetns {
		return usage(d.Applies(devices.Ifb, false))
	}
	if kind := c.String("kind"); kind != "" {
		if _, err := devices.Lookup(kind); err != nil {
			return usage(err)
		}
	}
	w, err := workers(c)
	if err != nil {
		return err
	}
	ns, ino, err := targetNetns(c)
	if err != nil {
		return err
	}
	defer ns.Close()
	recs, err := batch.LoadRecords()
	if err != nil {
		return err
	}
	var sets []*batch.Set
	var mine []*batch.Record
	for _, r := range recs {
		if !r.Match(ino, c.String("prefix"), c.String("kind")) {
			continue
		}
		s, err := r.Set()
		if err != nil {
			return err
		}
		if err := d.Applies(s.Kind, false); err != nil {
			return usage(err)
		}
		if d == batch.DeleteModule {
			if err := batch.ModuleLoaded(s.Kind); err != nil {
				return err
			}
		}
		sets, mine = append(sets, s), append(mine, r)
	}
	if len(sets) == 0 {
		fmt.Fprintf(c.App.ErrWriter, "devbulk: no devbulk runs recorded in netns %s\n", c.String("netns"))
		return nil
	}
	conn, err := nlbatch.Dial(ns, nlbatch.Options{})
	if err != nil {
		return err
	}
	defer conn.Close()
	var phases []batch.Phase
	var errs []error
	for i, s := range sets {
		p, err := batch.Delete(c.Context, batch.Target{Conn: conn, NS: ns}, s, d, batch.DeleteOptions{Workers: w})
		phases = append(phases, p)
		if err != nil {
			errs = append(errs, fmt.Errorf("run %s (group %d): %w", mine[i].Prefix, mine[i].Group, err))
			continue
		}
		if err := mine[i].Remove(); err != nil {
			errs = append(errs, err)
		}
	}
	if c.Bool("json") {
		if err := json.NewEncoder(c.App.Writer).Encode(map[string]any{"delete": phases}); err != nil {
			return err
		}
	} else {
		for i, p := range phases {
			fmt.Fprintf(c.App.Writer, "deleted %d %s links %s* by %s in %s: %.3f ms/device\n",
				p.Devices-p.Failed, sets[i].Kind.Name, sets[i].Prefix, p.Strategy, batch.FormatNS(p.WallNS), p.MsPerDevice)
		}
	}
	return errors.Join(errs...)
}
