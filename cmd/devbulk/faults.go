package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/devbulk/devbulk"
	"github.com/devbulk/devbulk/devices"
	"github.com/devbulk/devbulk/faults"
)

func faultsCommand() *cli.Command {
	return &cli.Command{
		Name:  "faults",
		Usage: "inject a fault into each allocation of devbulk's create, group delete and group move requests, one at a time (fail-nth), and check the kernel and devbulk after each",
		Description: "In devbulk's VM only, on a kernel with fault injection (devbulk's kernel from source has it):\n" +
			"devbulk vm --kernel 'src:TREE' -- faults --kind dummy. For each path, N = 1, 2, ... until the request runs\n" +
			"whole: the kernel fails the Nth fault point of the request; then devbulk's own delete must finish the run,\n" +
			"every device left must have been in a record, the step's namespaces must be freed, their sysfs must list\n" +
			"exactly their links, and the kernel must not complain (docs/findings.md). Exit 1 when a step broke one of these.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "kind", Value: "dummy", Usage: "the kind of the run's devices"},
			&cli.StringFlag{Name: "count", Value: "2", Usage: "devices a run (1..100): the request carries them all"},
			&cli.StringFlag{Name: "path", Usage: "the requests to fail: `P[,P..]` of create, delete (the group delete), move (the group move into a second namespace; not for bridge, vlan, macvlan) (default: every one the kind can take)"},
			&cli.StringFlag{Name: "max-n", Value: "2000", Usage: "the most fault points swept a path (1..100000)"},
			kernelNoiseFlag, jsonFlag, quietFlag,
		},
		Action: runFaults,
	}
}

// runFaults sweeps and prints the sweep, even when it was interrupted.
func runFaults(c *cli.Context) error {
	o, err := faultsOptionsOf(c)
	if err != nil {
		return err
	}
	if err := needNetAdmin(); err != nil {
		return err
	}
	o.Progress = progress(c)
	r, err := faults.Sweep(c.Context, o)
	clearProgress()
	if r == nil {
		return err
	}
	if c.Bool("json") {
		err = firstSaying(err, writeJSON(c.App.Writer, r))
	} else {
		r.WriteTable(c.App.Writer)
	}
	if n := r.Failed(); err == nil && n > 0 {
		return &exitError{exitFailed, fmt.Errorf("%d steps of the sweep broke a guarantee or made the kernel complain (see above)", n)}
	}
	return err
}

// faultsOptionsOf reads faults' flags.
func faultsOptionsOf(c *cli.Context) (faults.Options, error) {
	var o faults.Options
	if err := noArgs(c); err != nil {
		return o, err
	}
	var err error
	if o.Kind, err = kindOf(c); err != nil {
		return o, err
	}
	if o.Count, err = intFlag(c, "count", 1, 100); err != nil {
		return o, err
	}
	if o.MaxN, err = intFlag(c, "max-n", 1, 100000); err != nil {
		return o, err
	}
	if o.Paths, err = faultPaths(c, o.Kind); err != nil {
		return o, err
	}
	o.Noise, err = kernelNoise(c)
	return o, err
}

// faultPaths reads --path: by default every path the kind can take.
func faultPaths(c *cli.Context, k *devices.Kind) ([]faults.Path, error) {
	can := faults.PathsFor(k)
	if !c.IsSet("path") {
		return can, nil
	}
	var paths []faults.Path
	for _, p := range strings.Split(c.String("path"), ",") {
		switch path := faults.Path(p); {
		case !slices.Contains(faults.Paths, path) || slices.Contains(paths, path):
			return nil, usagef("--path %q: %q is not a new path of create, delete, move", c.String("path"), p)
		case !slices.Contains(can, path):
			why := "a run's lower devices would stay behind"
			if k.NetnsLocal {
				why = "the kernel keeps a " + k.Name + " in its namespace"
			}
			return nil, devbulk.NotSupported("--path %s: devbulk does not move a run of %s (%s)", p, k.Name, why)
		default:
			paths = append(paths, path)
		}
	}
	return paths, nil
}
