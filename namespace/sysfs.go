package namespace

import (
	"errors"
	"fmt"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// WithSysfs calls fn on a thread in network namespace ns whose /sys shows
// ns's devices, the way `ip netns exec` does (iproute2's netns_switch): a
// mount namespace of its own with every mount made a slave, /sys unmounted
// and mounted again. The thread then returns to its own mount namespace and
// the private one goes: devbulk's mounts are untouched. Processes fn starts
// see the same.
func WithSysfs(ns netns.NsHandle, fn func() error) error {
	return Run(ns, func() (err error) {
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
		return fn()
	})
}
