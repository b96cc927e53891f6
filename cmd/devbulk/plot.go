package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"
)

func plotCommand() *cli.Command {
	return &cli.Command{
		Name:      "plot",
		Usage:     "draw a result document as SVG: bench (ms per device against N; with --memory, the kernel's KiB per device against N), netns (backlog over time), check (against the baseline)",
		ArgsUsage: "RESULT.json",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "the SVG `FILE` (- for stdout; default: stdout, or RESULT.svg (RESULT-memory.svg with --memory) when stdout is a terminal)"},
			&cli.BoolFlag{Name: "memory", Usage: "of a bench: the kernel's memory per device (slab, per-CPU, vmalloc; MemAvailable taken) against N"},
			&cli.BoolFlag{Name: "bystander", Usage: "of a bench with --bystander: each operation's latency over time (log), the phases shaded, the idle p99 drawn"},
		},
		Action: plotDocument,
	}
}

func plotDocument(c *cli.Context) error {
	if c.Args().Len() != 1 {
		return usagef("plot takes one result document (bench --json, netns --json, check --baseline F --format json)")
	}
	b, err := os.ReadFile(c.Args().First())
	if err != nil {
		return usage(err)
	}
	view, err := plotView(c)
	if err != nil {
		return err
	}
	svg, err := drawSVG(c.Context, b, view)
	if u := undrawable(""); errors.As(err, &u) {
		return usagef("%s: %v", c.Args().First(), u)
	}
	if err != nil {
		return err
	}
	out := c.String("output")
	switch {
	case out == "" && isTerminal(1):
		// An SVG is no reading for a terminal: a file beside the
		// document's name, said where.
		out = strings.TrimSuffix(filepath.Base(c.Args().First()), ".json") + svgSuffix(view)
		if _, err := os.Lstat(out); err == nil {
			return usagef("stdout is a terminal and %s exists: give -o FILE (or -o - for stdout)", out)
		}
		if err := os.WriteFile(out, svg, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(c.App.ErrWriter, "devbulk: wrote %s (stdout is a terminal; -o - writes there)\n", out)
		return nil
	case out == "" || out == "-":
		_, err := c.App.Writer.Write(svg)
		return err
	}
	return os.WriteFile(out, svg, 0o644)
}

// plotView is the chart asked for: "" (the document's own), memory or
// bystander.
func plotView(c *cli.Context) (string, error) {
	switch {
	case c.Bool("memory") && c.Bool("bystander"):
		return "", usagef("--memory and --bystander: give one")
	case c.Bool("memory"):
		return "memory", nil
	case c.Bool("bystander"):
		return "bystander", nil
	}
	return "", nil
}

// svgSuffix ends the name of a chart drawn beside its document: another
// view must not take the name of the plain chart.
func svgSuffix(view string) string {
	if view != "" {
		return "-" + view + ".svg"
	}
	return ".svg"
}
