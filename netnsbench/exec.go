package netnsbench

import (
	"context"
	"fmt"
	"strings"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/devbulk/devbulk/internal/child"
	"github.com/devbulk/devbulk/namespace"
)

// netnsExec runs cmd (with sh -c) inside the network namespace
// bind-mounted at path the way `ip netns exec NAME` does, its /sys
// showing the namespace's devices (namespace.WithSysfs).
func netnsExec(ctx context.Context, path, cmd string) error {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	ns := netns.NsHandle(fd)
	defer ns.Close()
	return namespace.WithSysfs(ns, func() error {
		out, err := child.Command(ctx, "/bin/sh", "-c", cmd).CombinedOutput()
		if err != nil {
			return fmt.Errorf("%q: %v: %s", cmd, err, strings.TrimSpace(string(out)))
		}
		return nil
	})
}
