package main

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/devbulk/devbulk/lava"
	"github.com/devbulk/devbulk/netnsbench"
	"github.com/devbulk/devbulk/vm"
)

func cleanupCommand() *cli.Command {
	return &cli.Command{
		Name:  "cleanup",
		Usage: "remove every device, namespace and work directory devbulk left behind (after a crash or kill -9), by its records, and nothing else",
		Description: "Runs whose devbulk was killed while creating or deleting are finished (their devices deleted), records\n" +
			"whose namespace or devices are gone are pruned, malformed records are moved aside, and so are the\n" +
			"bind-mounted namespaces of a killed `devbulk netns create` and the work directories of a killed `devbulk vm`.\n" +
			"Runs that `devbulk create` completed are kept for you to use and delete, unless --all. What belongs to a\n" +
			"devbulk still running (same pid, start time and boot) is never touched.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "all", Usage: "also remove the runs devbulk create completed"},
		},
		Action: func(c *cli.Context) error {
			if err := noArgs(c); err != nil {
				return err
			}
			if err := needNetAdmin(); err != nil {
				return err
			}
			store, err := openStore()
			if err != nil {
				return err
			}
			done, err := store.Cleanup(c.Context, c.Bool("all"))
			if err != nil {
				return err
			}
			var errs []error
			for _, d := range done {
				fmt.Fprintln(c.App.Writer, d.What)
				errs = append(errs, d.Err)
			}
			runs, err := netnsbench.Cleanup(mountDir())
			errs = append(errs, err)
			for _, r := range runs {
				fmt.Fprintf(c.App.Writer, "netns create run %s: released %d namespaces\n", r.Dir, r.Namespaces)
			}
			dirs, err := vm.CleanupWorkDirs()
			errs = append(errs, err)
			for _, d := range dirs {
				fmt.Fprintf(c.App.Writer, "vm work directory %s: removed\n", d)
			}
			jobs, err := lava.CleanupWorkDirs()
			errs = append(errs, err)
			for _, d := range jobs {
				fmt.Fprintf(c.App.Writer, "lava run work directory %s (and lava-run's job directory): removed\n", d)
			}
			if len(done)+len(runs)+len(dirs)+len(jobs) == 0 {
				fmt.Fprintln(c.App.Writer, "nothing to clean up")
			}
			return errors.Join(errs...)
		},
	}
}
