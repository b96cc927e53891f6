package netnsbench

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/devbulk/devbulk/internal/child"
	"github.com/devbulk/devbulk/namespace"
)

// netnsExec runs cmd (with sh -c) inside the network namespace
// bind-mounted at path the way `ip netns exec NAME` does (iproute2's
// netns_switch): setns into it, a mount namespace of its own with every
// mount made a slave, /sys unmounted and mounted again so that it shows
// the namespace's devices, then the command. The thread then returns to its
// own mount namespace, and the private one goes; devbulk's is untouched.
func netnsExec(ctx context.Context, path, cmd string) error {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	ns := netns.NsHandle(fd)
	defer ns.Close()
	return namespace.Run(ns, func() (err error) {
		// Back to the thread's own mount namespace afterwards: the private
		// one (its /sys holds the network namespace) then has no user and
		// goes, even where the thread lives on (the process's main thread
		// is parked, not ended).
		orig, err := unix.Open("/proc/thread-self/ns/mnt", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(orig)
		if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
			return fmt.Errorf("unshare(CLONE_NEWNS): %w", err)
		}
		defer func() {
			if serr := unix.Setns(orig, unix.CLONE_NEWNS); serr != nil {
				err = errors.Join(err, fmt.Errorf("setns back to the mount namespace: %w", serr))
			}
		}()
		if err := unix.Mount("", "/", "none", unix.MS_SLAVE|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("making / a slave: %w", err)
		}
		if err := unix.Unmount("/sys", unix.MNT_DETACH|unix.UMOUNT_NOFOLLOW); err != nil && !errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("unmounting /sys: %w", err)
		}
		if err := unix.Mount("sysfs", "/sys", "sysfs", 0, ""); err != nil {
			return fmt.Errorf("mounting sysfs: %w", err)
		}
		out, err := child.Command(ctx, "/bin/sh", "-c", cmd).CombinedOutput()
		if err != nil {
			return fmt.Errorf("%q: %v: %s", cmd, err, strings.TrimSpace(string(out)))
		}
		return nil
	})
}
