package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/devbulk/devbulk/batch"
	"github.com/devbulk/devbulk/netnsbench"
	"github.com/devbulk/devbulk/nlbatch"
	"github.com/urfave/cli/v2"
	"github.com/vishvananda/netns"
)

func cleanupCommand() *cli.Command {
	return &cli.Command{
		Name:  "cleanup",
		Usage: "remove every device and namespace devbulk left behind (after a crash or kill -9), by its records, and nothing else",
		Description: "Runs whose devbulk was killed before it finished creating are removed, and so are the bind-mounted namespaces\n" +
			"of a killed `devbulk netns create`. Runs that `devbulk create`\n" +
			"completed are kept for you to use and delete, unless --all. Runs of a devbulk still running are never touched.",
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
			recs, err := batch.LoadRecords()
			if err != nil {
				return err
			}
			var errs []error
			done := 0
			for _, r := range recs {
				if r.Alive() || (r.Complete && !c.Bool("all")) {
					continue
				}
				done++
				msg, err := cleanupRun(r)
				if err != nil {
					errs = append(errs, fmt.Errorf("run %s in netns %s: %w", r.Prefix, r.Netns, err))
					continue
				}
				fmt.Fprintln(c.App.Writer, msg)
			}
			runs, err := netnsbench.Cleanup()
			if err != nil {
				errs = append(errs, err)
			}
			for _, r := range runs {
				done++
				fmt.Fprintf(c.App.Writer, "netns create run %s: released %d namespaces\n", r.Dir, r.Namespaces)
			}
			if done == 0 {
				fmt.Fprintln(c.App.Writer, "nothing to clean up")
			}
			return errors.Join(errs...)
		},
	}
}

// cleanupRun deletes one recorded run's devices (by group, which checks the
// group holds only them) and removes its record. A namespace that no longer
// exists took the devices with it.
func cleanupRun(r *batch.Record) (string, error) {
	ns, err := recordedNetns(r)
	if err != nil {
		return "", err
	}
	if !ns.IsOpen() {
		return fmt.Sprintf("run %s: netns %s is gone, and its devices with it", r.Prefix, r.Netns), r.Remove()
	}
	defer ns.Close()
	s, err := r.Set()
	if err != nil {
		return "", err
	}
	conn, err := nlbatch.Dial(ns, nlbatch.Options{})
	if err != nil {
		return "", err
	}
	defer conn.Close()
	p, err := batch.Delete(context.Background(), batch.Target{Conn: conn, NS: ns}, s, batch.DeleteGroup, batch.DeleteOptions{})
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("run %s: deleted %d %s links in netns %s", r.Prefix, p.Devices, s.Kind.Name, r.Netns), r.Remove()
}

// recordedNetns opens the namespace a run was made in: by its name, or, when
// the name now means another namespace ("current" seen from elsewhere, or a
// name reused), by its inode among every namespace still held. A closed
// handle means the namespace no longer exists.
func recordedNetns(r *batch.Record) (netns.NsHandle, error) {
	if ns, ino, err := namespace(r.Netns); err == nil {
		if ino == r.Inode {
			return ns, nil
		}
		ns.Close()
	}
	path, ok := batch.FindNetns(r.Inode)
	if !ok {
		return netns.None(), nil
	}
	return netns.GetFromPath(path)
}
