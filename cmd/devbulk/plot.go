package main

import (
	"io"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/devbulk/devbulk/charts"
)

func plotCommand() *cli.Command {
	return &cli.Command{
		Name:      "plot",
		Usage:     "draw a result document as SVG: bench (ms per device against N), netns (backlog over time), check (against the baseline)",
		ArgsUsage: "RESULT.json",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Value: "-", Usage: "the SVG `FILE` (- for stdout)"},
		},
		Action: func(c *cli.Context) error {
			if c.Args().Len() != 1 {
				return usagef("plot takes one result document (bench --json, netns --json, check --baseline F --format json)")
			}
			b, err := os.ReadFile(c.Args().First())
			if err != nil {
				return usage(err)
			}
			p, err := charts.FromDocument(b)
			if err != nil {
				return usagef("%s: %v", c.Args().First(), err)
			}
			if c.String("output") == "-" {
				return charts.WriteSVG(c.App.Writer, p)
			}
			return writeFile(c.String("output"), func(w io.Writer) error { return charts.WriteSVG(w, p) })
		},
	}
}
