package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

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
// no report of its own, when it has any (or could not read the log);
// a clean log is said in the JSON document only.
func (w watch) saysKernel(c *cli.Context) {
	if s := w.kernel; s != nil && (len(s.Findings) > 0 || s.Unread != "") {
		s.Write(c.App.Writer)
	}
}

// complained says that the kernel complained during the command (its
// findings printed, or in the JSON document): the command exits 1, as a
// failed check does; nil when it did not.
func (w watch) complained(c *cli.Context) error {
	if w.kernel == nil || len(w.kernel.Findings) == 0 {
		return nil
	}
	return fmt.Errorf("the kernel complained %d times during the %s: findings in its kernel log", len(w.kernel.Findings), c.Command.FullName())
}

// failing is a command's error when its work failed: the kernel's
// complaints meanwhile are said too, never dropped with the report.
func (w watch) failing(c *cli.Context, err error) error {
	w.saysKernel(c)
	return errors.Join(err, w.complained(c))
}
