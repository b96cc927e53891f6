package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/devbulk/devbulk/lava"
	"github.com/devbulk/devbulk/namespace"
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
		Action: cleanup,
	}
}

func cleanup(c *cli.Context) error {
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
	var lines []string
	var errs []error
	for _, d := range done {
		lines = append(lines, d.What)
		errs = append(errs, d.Err)
	}
	more, err := cleanupWorkDirs()
	lines = append(lines, more...)
	if len(lines) == 0 {
		lines = append(lines, "nothing to clean up")
	}
	fmt.Fprintln(c.App.Writer, strings.Join(lines, "\n"))
	return errors.Join(append(errs, err)...)
}

// cleanupWorkDirs removes what a killed netns create, vm or lava run left,
// a line for each.
func cleanupWorkDirs() ([]string, error) {
	var lines []string
	runs, nerr := namespace.CleanupPinned(mountDir())
	for _, r := range runs {
		lines = append(lines, fmt.Sprintf("netns create run %s: released %d namespaces", r.Dir, r.Namespaces))
	}
	dirs, verr := vm.CleanupWorkDirs()
	for _, d := range dirs {
		lines = append(lines, fmt.Sprintf("vm work directory %s: removed", d))
	}
	jobs, lerr := lava.CleanupWorkDirs()
	for _, d := range jobs {
		lines = append(lines, fmt.Sprintf("lava run work directory %s (and lava-run's job directory): removed", d))
	}
	return lines, errors.Join(nerr, verr, lerr)
}
