package main

import (
	"os/exec"
	"strings"

	"github.com/devbulk/devbulk"

	"github.com/urfave/cli/v2"

	"github.com/devbulk/devbulk/netnsbench"
)

// repeatFlag is churn's and create's count of rounds.
var repeatFlag = &cli.StringFlag{Name: "repeat", Value: "1", Usage: "rounds (1..100); each waits for the kernel to free the namespaces of the run before it"}

func netnsCommand() *cli.Command {
	series := &cli.StringFlag{Name: "series", Usage: "write the backlog time series to `FILE` (CSV)"}
	profile := &cli.BoolFlag{Name: "profile", Usage: "break the cleanup worker's time down by pernet exit handler and RCU wait " +
		"(function_graph, and the kernel's pernet list read from /proc/kcore; in devbulk vm, or where tracing is allowed)"}
	common := []cli.Flag{profile, series, kernelNoiseFlag, jsonFlag, svgFlag, quietFlag, explainFlag}
	return &cli.Command{
		Name:        "netns",
		Usage:       "network-namespace creation and dismantle benchmarks, with the kernel's drain",
		Subcommands: []*cli.Command{netnsChurnCommand(common), netnsCreateCommand(common), netnsSequentialCommand(common)},
	}
}

func netnsChurnCommand(common []cli.Flag) *cli.Command {
	return &cli.Command{
		Name:  "churn",
		Usage: "W workers each create, load and release N namespaces",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "workers", Value: "2", Usage: "parallel workers (1..1024)"},
			&cli.StringFlag{Name: "per-worker", Value: "100", Usage: "namespaces per worker"},
			payloadFlag("lo-up"),
			&cli.StringFlag{Name: "compare", Usage: "`exec`: also run the payload's classic shell form, unshare -n sh -c '...' (ip link set lo up, " +
				"sysctl -w, ipvsadm -A); payload:LIST: also run another payload (payload:veth:1:moved against --payload veth:1); " +
				"side by side, the order alternating round by round"},
			repeatFlag, bystanderFlag,
		}, common...),
		Action: churn,
	}
}

func netnsCreateCommand(common []cli.Flag) *cli.Command {
	return &cli.Command{
		Name: "create",
		Usage: "create and keep N namespaces (bind-mounted under " + mountDir() + "), with the creation rate every K, " +
			"then release them all and time the drain",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "count", Value: "1000", Usage: "namespaces"},
			payloadFlag(""),
			&cli.BoolFlag{Name: "veth", Usage: "give each namespace a veth pair to a parent namespace devbulk makes for the run (--payload veth:1)"},
			&cli.StringFlag{Name: "exec-step", Usage: "once all are made, run `CMD` in each the way ip netns exec does (setns, a private mount " +
				"namespace, /sys remounted): a second phase with its own rate curve"},
			&cli.StringFlag{Name: "step", Usage: "report the creation rate every `K` namespaces (default: count/20)"},
			&cli.StringFlag{Name: "compare", Usage: "`payload:LIST`: also keep namespaces with another payload (payload:veth:1:moved against " +
				"--payload veth:1), in runs of their own, side by side, the order alternating round by round"},
			repeatFlag,
		}, common...),
		Action: netnsCreate,
	}
}

func netnsSequentialCommand(common []cli.Flag) *cli.Command {
	return &cli.Command{
		Name:   "sequential",
		Usage:  "one thread doing unshare(CLONE_NEWNET) in a loop: creation time and CPU apart from the drain",
		Flags:  append([]cli.Flag{&cli.StringFlag{Name: "count", Value: "1000", Usage: "namespaces"}}, common...),
		Action: sequential,
	}
}

func churn(c *cli.Context) error {
	o, err := churnOptionsOf(c)
	if err != nil {
		return err
	}
	w, err := watchingOf(c, o.CompareExec || o.ComparePayload != nil)
	if err != nil {
		return err
	}
	return runNetns(c, w, &o.Payload, o.ComparePayload, func() (*netnsbench.Report, error) { return netnsbench.Churn(c.Context, o) })
}

func payloadFlag(value string) cli.Flag {
	return &cli.StringFlag{Name: "payload", Value: value, Usage: "what each namespace gets, items in order: `LIST` of " + netnsbench.PayloadHelp()}
}

// payloadOf reads --payload (and create's --veth, veth:1).
func payloadOf(c *cli.Context) (netnsbench.Payload, error) {
	spec := c.String("payload")
	if c.Bool("veth") {
		spec = netnsbench.WithVeth(spec)
	}
	if spec == "" {
		return netnsbench.Payload{}, nil
	}
	p, err := netnsbench.ParsePayload(spec)
	if err != nil {
		return p, usage(err)
	}
	return p, nil
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
	if o.Payload, err = payloadOf(c); err != nil {
		return o, err
	}
	if o.Repeat, err = intFlag(c, "repeat", 1, netnsbench.MaxRepeat); err != nil {
		return o, err
	}
	if o.CompareExec, o.ComparePayload, err = compareOf(c, o.Payload); err != nil {
		return o, err
	}
	if err := o.Check(); err != nil {
		return o, usage(err)
	}
	return o, nil
}

// compareOf reads --compare: exec (churn only) needs the shell loop's
// programs; payload:LIST is another payload.
func compareOf(c *cli.Context, p netnsbench.Payload) (shellForm bool, other *netnsbench.Payload, err error) {
	switch what := c.String("compare"); {
	case what == "":
	case what == "exec" && c.Command.Name == "churn":
		shell, err := p.Shell()
		if err != nil {
			return false, nil, usagef("--compare exec: %v", err)
		}
		for _, prog := range append([]string{"unshare", "sh"}, p.Programs()...) {
			if _, err := exec.LookPath(prog); err != nil {
				return false, nil, devbulk.NotSupported("--compare exec runs `unshare -n sh -c '%s'`: %w", shell, err)
			}
		}
		return true, nil, nil
	case strings.HasPrefix(what, "payload:"):
		if what == "payload:" {
			return false, nil, usagef("--compare payload: needs a payload list, as payload:veth:1:moved")
		}
		q, err := netnsbench.ParsePayload(strings.TrimPrefix(what, "payload:"))
		if err != nil {
			return false, nil, usagef("--compare %s: %v", what, err)
		}
		return false, &q, nil
	case c.Command.Name == "churn":
		return false, nil, usagef("--compare %q: valid are exec and payload:LIST (as payload:veth:1:moved)", what)
	default:
		return false, nil, usagef("--compare %q: valid is payload:LIST (as payload:veth:1:moved); netns create has no shell form to compare", what)
	}
	return false, nil, nil
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
	w, err := watchingOf(c, false)
	if err != nil {
		return err
	}
	o := netnsbench.SequentialOptions{Count: n, Profile: c.Bool("profile"), Counter: counter(c)}
	return runNetns(c, w, nil, nil, func() (*netnsbench.Report, error) { return netnsbench.Sequential(c.Context, o) })
}

func netnsCreate(c *cli.Context) error {
	o, err := keepOptionsOf(c)
	if err != nil {
		return err
	}
	w, err := watchingOf(c, false)
	if err != nil {
		return err
	}
	return runNetns(c, w, &o.Payload, o.ComparePayload, func() (*netnsbench.Report, error) { return netnsbench.Keep(c.Context, o) })
}

// keepOptionsOf reads netns create's flags.
func keepOptionsOf(c *cli.Context) (netnsbench.KeepOptions, error) {
	o := netnsbench.KeepOptions{ExecStep: c.String("exec-step"), Counter: counter(c), MountDir: mountDir(), Profile: c.Bool("profile")}
	if err := noArgs(c); err != nil {
		return o, err
	}
	var err error
	if o.Count, err = intFlag(c, "count", 1, netnsbench.MaxNamespaces); err != nil {
		return o, err
	}
	if o.Payload, err = payloadOf(c); err != nil {
		return o, err
	}
	if c.IsSet("step") {
		if o.Step, err = intFlag(c, "step", 1, o.Count); err != nil {
			return o, err
		}
	}
	if o.Repeat, err = intFlag(c, "repeat", 1, netnsbench.MaxRepeat); err != nil {
		return o, err
	}
	if _, o.ComparePayload, err = compareOf(c, o.Payload); err != nil {
		return o, err
	}
	if err := o.Check(); err != nil {
		return o, usage(err)
	}
	return o, nil
}

// runNetns prepares the payloads (p and its comparison's; nil: none),
// runs a netns scenario watched as w asks, and prints its report.
func runNetns(c *cli.Context, w watching, p, compare *netnsbench.Payload, scenario func() (*netnsbench.Report, error)) error {
	if err := needNetAdmin(); err != nil {
		return err
	}
	var r *netnsbench.Report
	seen, err := watched(c, w, func() error {
		release, err := netnsbench.PrepareAll(p, compare) // loading ip_vs, watched too
		defer release()
		if err != nil {
			return err
		}
		r, err = scenario()
		return err
	})
	return writeNetns(c, r, seen, err)
}

// writeNetns prints what ran, with what was seen meanwhile, even when the
// run failed.
func writeNetns(c *cli.Context, r *netnsbench.Report, seen watch, err error) error {
	clearProgress()
	if r == nil || len(r.Runs) == 0 {
		return seen.failing(c, err)
	}
	r.KernelLog, r.BystanderIdle, r.Bystander = seen.kernel, seen.idle, seen.during
	if path := c.String("series"); path != "" {
		if werr := writeFile(path, r.WriteSeries); werr != nil && err == nil {
			err = werr
		}
	}
	var werr error
	if c.Bool("json") {
		werr = writeJSON(c.App.Writer, r)
	} else {
		r.Explain = c.Bool("explain")
		werr = r.WriteTable(c.App.Writer)
	}
	if werr == nil {
		werr = writeSVG(c, r)
	}
	return seen.verdict(c, firstSaying(err, werr))
}
