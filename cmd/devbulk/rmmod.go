package main

import (
	"cmp"

	"github.com/urfave/cli/v2"

	"github.com/devbulk/devbulk/batch"
	"github.com/devbulk/devbulk/bench"
	"github.com/devbulk/devbulk/devices"
)

func rmmodCommand() *cli.Command {
	return &cli.Command{
		Name:  "rmmod",
		Usage: "module unload against one-by-one and batch deletes of the same devices, in one table",
		Description: "devbulk rmmod --kind dummy --count N: N dummies removed by unloading the module (rmmod dummy),\n" +
			"one by one, and by group. devbulk rmmod --kind dummy --vlans M [--up]: M vlans on one dummy, removed by\n" +
			"unloading dummy (the vlans go with their lower device), by deleting the lower device, and one by one.\n" +
			"Devices are created in throwaway namespaces; the module must be loadable and unused by anything else\n" +
			"(in devbulk vm it is).",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "kind", Value: "dummy", Usage: "the module's kind: " + devices.NamesOf(devices.LowerKinds())},
			&cli.StringFlag{Name: "count", Value: "1000", Usage: "devices of the kind (without --vlans)"},
			&cli.StringFlag{Name: "vlans", Usage: "vlans on one device of the kind, instead"},
			&cli.StringFlag{Name: "repeat", Value: "1", Usage: "cycles per strategy (1..100)"},
			bystanderFlag, upFlag, traceRCUFlag, profileFlag, kernelNoiseFlag, jsonFlag, formatFlag(benchFormats...), svgFlag, quietFlag,
		},
		Action: benchWith(rmmodOptionsOf),
	}
}

// rmmodOptionsOf reads rmmod's flags into the bench they describe: the
// module strategy beside one-by-one and group (or lower) deletes.
func rmmodOptionsOf(c *cli.Context) (bench.Options, error) {
	var o bench.Options
	if err := noArgs(c); err != nil {
		return o, err
	}
	k, err := kindOf(c)
	if _, ferr := outputFormat(c, benchFormats...); ferr != nil || err != nil {
		return o, cmp.Or(ferr, err)
	}
	if k.LowerChoice == 0 {
		return o, usagef("rmmod --kind %s: valid are %s", k.Name, devices.NamesOf(devices.LowerKinds()))
	}
	o = bench.Options{Kind: k, Create: batch.CreatePipelined, Up: c.Bool("up"), TraceRCU: c.Bool("trace-rcu"), Profile: c.Bool("profile"),
		Deletes: []batch.DeleteStrategy{batch.DeleteModule, batch.DeleteSerial, batch.DeleteGroup}}
	if o.Bystander, err = bystanderOf(c, false); err != nil {
		return o, err
	}
	if o.Repeat, err = intFlag(c, "repeat", 1, 100); err != nil {
		return o, err
	}
	if c.String("vlans") != "" {
		if c.IsSet("count") {
			return o, usagef("--count and --vlans: give one")
		}
		o.Kind, o.Lower, o.Own = devices.Vlan, k, []batch.Own{batch.ModuleOptions{UnloadLower: true}}
		o.Deletes = []batch.DeleteStrategy{batch.DeleteModule, batch.DeleteLower, batch.DeleteSerial}
		n, err := intFlag(c, "vlans", 1, devices.MaxVlanID) // they sit on one lower device
		o.Counts = []int{n}
		return o, err
	}
	if o.Counts, err = counts(c.String("count"), o.Kind); err != nil {
		return o, err
	}
	if len(o.Counts) != 1 {
		return o, usagef("rmmod takes one --count, got %q", c.String("count"))
	}
	return o, nil
}
