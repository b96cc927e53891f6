package main

import (
	"fmt"
	"os/exec"

	"github.com/devbulk/devbulk"

	"github.com/urfave/cli/v2"
	"gonum.org/v1/plot"

	"github.com/devbulk/devbulk/charts"
	"github.com/devbulk/devbulk/devices"
	"github.com/devbulk/devbulk/netnsbench"
)

func netnsCommand() *cli.Command {
	series := &cli.StringFlag{Name: "series", Usage: "write the backlog time series to `FILE` (CSV)"}
	profile := &cli.BoolFlag{Name: "profile", Usage: "break the cleanup worker's time down by pernet exit handler and RCU wait " +
		"(function_graph and a kprobe; in devbulk vm, or where tracing is allowed)"}
	return &cli.Command{
		Name:  "netns",
		Usage: "network-namespace creation and dismantle benchmarks, with the kernel's drain",
		Subcommands: []*cli.Command{
			{
				Name:  "churn",
				Usage: "W workers each create, load and release N namespaces",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "workers", Value: "2", Usage: "parallel workers (1..1024)"},
					&cli.StringFlag{Name: "per-worker", Value: "100", Usage: "namespaces per worker"},
					&cli.StringFlag{Name: "payload", Value: "lo-up", Usage: "lo-up, devices:KIND:COUNT, veth or exec:CMD"},
					&cli.StringFlag{Name: "compare", Usage: "`exec`: also run the shell form, unshare -n sh -c 'ip link set lo up', side by side (the order alternating round by round)"},
					&cli.StringFlag{Name: "repeat", Value: "1", Usage: "rounds (1..100); each waits for the kernel to free the namespaces of the run before it"},
					profile, series, jsonFlag, svgFlag, quietFlag,
				},
				Action: churn,
			},
			{
				Name: "create",
				Usage: "create and keep N namespaces (bind-mounted under " + mountDir() + "), with the creation rate every K, " +
					"then release them all and time the drain",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "count", Value: "1000", Usage: "namespaces"},
					&cli.BoolFlag{Name: "veth", Usage: "give each namespace a veth pair to a parent namespace devbulk makes for the run"},
					&cli.StringFlag{Name: "step", Usage: "report the creation rate every `K` namespaces (default: count/20)"},
					profile, series, jsonFlag, svgFlag, quietFlag,
				},
				Action: netnsCreate,
			},
			{
				Name:   "sequential",
				Usage:  "one thread doing unshare(CLONE_NEWNET) in a loop: creation time and CPU apart from the drain",
				Flags:  []cli.Flag{&cli.StringFlag{Name: "count", Value: "1000", Usage: "namespaces"}, profile, series, jsonFlag, svgFlag},
				Action: sequential,
			},
		},
	}
}

func churn(c *cli.Context) error {
	o, err := churnOptionsOf(c)
	if err != nil {
		return err
	}
	if err := needNetAdmin(); err != nil {
		return err
	}
	if k := o.Payload.Kind; k != nil {
		_, sup, err := support(k)
		if err != nil {
			return err
		}
		if err := devices.Require(sup, k); err != nil {
			return fmt.Errorf("payload %s: %w", o.Payload.Name, err)
		}
	}
	r, err := netnsbench.Churn(c.Context, o)
	return writeNetns(c, r, err)
}

// churnOptionsOf reads the churn's flags; --compare exec needs the shell
// loop's programs.
func churnOptionsOf(c *cli.Context) (netnsbench.ChurnOptions, error) {
	o := netnsbench.ChurnOptions{Counter: counter(c), Profile: c.Bool("profile")}
	if err := noArgs(c); err != nil {
		return o, err
	}
	var err error
	if o.Workers, err = intFlag(c, "workers", 1, 1024); err != nil {
		return o, err
	}
	if o.PerWorker, err = intFlag(c, "per-worker", 1, netnsbench.MaxNamespaces); err != nil {
		return o, err
	}
	if o.Payload, err = netnsbench.ParsePayload(c.String("payload")); err != nil {
		return o, usage(err)
	}
	if o.Repeat, err = intFlag(c, "repeat", 1, netnsbench.MaxRepeat); err != nil {
		return o, err
	}
	switch c.String("compare") {
	case "":
	case "exec":
		o.CompareExec = true
		if o.Payload.Name != "lo-up" {
			return o, usagef("--compare exec runs the classic lo-up loop: use --payload lo-up")
		}
		for _, prog := range []string{"unshare", "sh", "ip"} {
			if _, err := exec.LookPath(prog); err != nil {
				return o, devbulk.NotSupported("--compare exec runs `unshare -n sh -c 'ip link set lo up'`: %w", err)
			}
		}
	default:
		return o, usagef("--compare %q: the only comparison is exec", c.String("compare"))
	}
	if err := o.Check(); err != nil {
		return o, usage(err)
	}
	return o, nil
}

func sequential(c *cli.Context) error {
	if err := noArgs(c); err != nil {
		return err
	}
	n, err := intFlag(c, "count", 1, netnsbench.MaxNamespaces)
	if err != nil {
		return err
	}
	if err := netnsbench.CheckCount(n, 1); err != nil {
		return usage(err)
	}
	if err := needNetAdmin(); err != nil {
		return err
	}
	r, err := netnsbench.Sequential(c.Context, netnsbench.SequentialOptions{Count: n, Profile: c.Bool("profile")})
	return writeNetns(c, r, err)
}

func netnsCreate(c *cli.Context) error {
	if err := noArgs(c); err != nil {
		return err
	}
	n, err := intFlag(c, "count", 1, netnsbench.MaxNamespaces)
	if err != nil {
		return err
	}
	o := netnsbench.KeepOptions{Count: n, Veth: c.Bool("veth"), Counter: counter(c), MountDir: mountDir(), Profile: c.Bool("profile")}
	if c.IsSet("step") {
		if o.Step, err = intFlag(c, "step", 1, n); err != nil {
			return err
		}
	}
	if err := o.Check(); err != nil {
		return usage(err)
	}
	if err := needNetAdmin(); err != nil {
		return err
	}
	r, err := netnsbench.Keep(c.Context, o)
	return writeNetns(c, r, err)
}

// writeNetns prints what ran, even when the run failed.
func writeNetns(c *cli.Context, r *netnsbench.Report, err error) error {
	if r == nil || len(r.Runs) == 0 {
		return err
	}
	if path := c.String("series"); path != "" {
		if werr := writeFile(path, r.WriteSeries); werr != nil && err == nil {
			err = werr
		}
	}
	var werr error
	if c.Bool("json") {
		werr = writeJSON(c.App.Writer, r)
	} else {
		werr = r.WriteTable(c.App.Writer)
	}
	if werr == nil {
		werr = writeSVG(c, func() (*plot.Plot, error) { return charts.Netns(r) })
	}
	if err == nil {
		err = werr
	}
	return err
}
