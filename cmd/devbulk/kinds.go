package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/urfave/cli/v2"
)

func kindsCommand() *cli.Command {
	return &cli.Command{
		Name:  "kinds",
		Usage: "list the link kinds and whether this kernel can create them (probed in a scratch netns)",
		Action: func(c *cli.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			if err := needNetAdmin(); err != nil {
				return err
			}
			_, sup, err := support()
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(c.App.Writer, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "KIND\tMODULE\tHERE")
			for _, s := range sup {
				here := "yes"
				if !s.OK {
					here = "no: " + s.Err.Error()
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\n", s.Kind.Name, s.Kind.Module, here)
			}
			return tw.Flush()
		},
	}
}
