package main

import (
	"fmt"
	"io"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/devbulk/devbulk"
	"github.com/devbulk/devbulk/bystander"
	"github.com/devbulk/devbulk/kernlog"
)

// kernelNoiseFlag replaces devbulk's list of the kernel's complaints that
// are not findings.
var kernelNoiseFlag = &cli.StringFlag{Name: "kernel-noise", Usage: "the kernel's complaints not reported as findings: `FILE` of regular expressions, one a line, " +
	"matched against a report's first line (default: devbulk's list, docs/findings.md; /dev/null: none)"}

// kernelNoise reads --kernel-noise (devbulk's list when not given).
func kernelNoise(c *cli.Context) (kernlog.Noise, error) {
	n, err := kernlog.ReadNoise(c.String("kernel-noise"))
	if err != nil {
		return nil, usagef("--kernel-noise: %v", err)
	}
	return n, nil
}

// watching is what a command watches while it works: the kernel's log
// (with its noise list), and a bystander's prober when --bystander asks.
type watching struct {
	noise kernlog.Noise
	by    *bystander.Config
}

// watchingOf reads --kernel-noise and --bystander (compare: the command
// compares two forms, which the prober would both watch: refused).
func watchingOf(c *cli.Context, compare bool) (watching, error) {
	noise, err := kernelNoise(c)
	if err != nil {
		return watching{}, err
	}
	by, err := bystanderOf(c, compare)
	return watching{noise, by}, err
}

// watch is what was seen during a command: the kernel's complaints, and a
// bystander's idle baseline and what it waited (both nil: no bystander).
type watch struct {
	kernel       *kernlog.Summary
	idle, during *bystander.Stats
}

// watched runs work with the kernel's log read all along (its phase the
// command's name) and beside the bystander w asks for: the prober's idle
// baseline first, then what it waited during work.
func watched(c *cli.Context, w watching, work func() error) (seen watch, err error) {
	klog := kernlog.Watch(w.noise)
	klog.Phase(c.Command.FullName())
	defer func() { s := klog.Stop(); seen.kernel = &s }()
	if w.by == nil {
		return seen, work()
	}
	p, err := bystander.Start(*w.by)
	if err != nil {
		return seen, err
	}
	defer p.Stop()
	if say := progress(c); say != nil {
		say(fmt.Sprintf("bystander %s: idle baseline, %s", w.by, p.IdleFor()))
	}
	base, err := p.Baseline(c.Context)
	if err != nil {
		return seen, err
	}
	from := time.Now()
	err = work()
	st := p.Window(from, time.Now())
	seen.idle, seen.during = &base, &st
	return seen, err
}

// saysKernel prints the kernel's complaints during a command that prints
// no report of its own, when it has any (or could not read the log), to w;
// a clean log is said in the JSON document only.
func (seen watch) saysKernel(w io.Writer) {
	if s := seen.kernel; s != nil && (len(s.Findings) > 0 || s.Unread != "") {
		s.Write(w)
	}
}

// verdict is the command's error, err, or, when it has none and the kernel
// complained meanwhile, that: exit 1, as a failed check. A complaint
// behind an error of the command's own is said on stderr, where the
// error's own exit code (a refusal's, an interruption's) is kept.
func (seen watch) verdict(c *cli.Context, err error) error {
	if seen.kernel == nil || len(seen.kernel.Findings) == 0 {
		return err
	}
	complained := fmt.Errorf("the kernel complained %s during the %s: findings in its kernel log", devbulk.Plural(len(seen.kernel.Findings), "time"), c.Command.FullName())
	if err == nil {
		return complained
	}
	fmt.Fprintf(c.App.ErrWriter, "devbulk: %v\n", complained)
	return err
}

// failing is a command's error when its work failed, before any report:
// the kernel's complaints meanwhile are said on stderr (stdout may be a
// JSON document's), never dropped.
func (seen watch) failing(c *cli.Context, err error) error {
	seen.saysKernel(c.App.ErrWriter)
	return seen.verdict(c, err)
}
