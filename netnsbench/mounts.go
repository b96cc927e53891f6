package netnsbench

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/devbulk/devbulk/batch"
	"golang.org/x/sys/unix"
)

// MountDir holds the namespaces that `netns create` keeps alive by bind
// mounts, as `ip netns add` does under /run/netns: one directory per run,
// named after the devbulk process that made it, so that Cleanup can tell a
// crashed run from a running one.
var MountDir = "/run/devbulk/netns"

// mountRun is one run's directory of bind-mounted namespaces.
type mountRun struct{ dir string }

// newMountRun makes the run's directory a shared mount point of its own, as
// iproute2 does for /run/netns: an unmount here then propagates to the
// copies that later mount namespaces (`ip netns exec`, systemd units) took,
// which would otherwise keep a namespace alive after devbulk released it.
func newMountRun() (*mountRun, error) {
	dir := filepath.Join(MountDir, fmt.Sprintf("%d-%d", os.Getpid(), time.Now().UnixNano()))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if err := unix.Mount(dir, dir, "none", unix.MS_BIND, ""); err != nil {
		os.Remove(dir)
		return nil, fmt.Errorf("bind-mount %s on itself: %w", dir, err)
	}
	if err := unix.Mount("", dir, "none", unix.MS_SHARED, ""); err != nil {
		_ = unix.Unmount(dir, unix.MNT_DETACH)
		os.Remove(dir)
		return nil, fmt.Errorf("make %s a shared mount: %w", dir, err)
	}
	return &mountRun{dir: dir}, nil
}

func (m *mountRun) path(i int) string { return filepath.Join(m.dir, fmt.Sprintf("ns%06d", i)) }

// keep bind-mounts the calling thread's network namespace as entry i.
func (m *mountRun) keep(i int) error {
	p := m.path(i)
	if err := os.WriteFile(p, nil, 0o400); err != nil {
		return err
	}
	if err := unix.Mount("/proc/thread-self/ns/net", p, "none", unix.MS_BIND, ""); err != nil {
		os.Remove(p)
		return fmt.Errorf("bind-mount netns on %s: %w", p, err)
	}
	return nil
}

// release unmounts entry i, which releases its namespace.
func (m *mountRun) release(i int) error {
	p := m.path(i)
	if err := unix.Unmount(p, unix.MNT_DETACH); err != nil {
		return fmt.Errorf("unmount %s: %w", p, err)
	}
	return os.Remove(p)
}

// remove unmounts whatever entries are left, then the directory itself.
func (m *mountRun) remove() (int, error) {
	ents, err := os.ReadDir(m.dir)
	if err != nil {
		return 0, err
	}
	var errs []error
	n := 0
	for _, e := range ents {
		p := filepath.Join(m.dir, e.Name())
		if err := unix.Unmount(p, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) {
			errs = append(errs, fmt.Errorf("unmount %s: %w", p, err))
			continue
		}
		if err := os.Remove(p); err != nil {
			errs = append(errs, err)
			continue
		}
		n++
	}
	if len(errs) > 0 {
		return n, errors.Join(errs...)
	}
	if err := unix.Unmount(m.dir, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) {
		return n, fmt.Errorf("unmount %s: %w", m.dir, err)
	}
	return n, os.Remove(m.dir)
}

// owner is the PID in the run directory's name.
func (m *mountRun) owner() int {
	pid, _ := strconv.Atoi(strings.SplitN(filepath.Base(m.dir), "-", 2)[0])
	return pid
}

// CleanedRun is a run directory that Cleanup removed.
type CleanedRun struct {
	Dir        string
	Namespaces int
}

// Cleanup removes the bind-mounted namespaces of every `netns create` run
// whose devbulk process is gone (killed before it could dismantle them).
// Runs of a devbulk still running are left alone.
func Cleanup() ([]CleanedRun, error) {
	ents, err := os.ReadDir(MountDir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	sort.Slice(ents, func(i, j int) bool { return ents[i].Name() < ents[j].Name() })
	var done []CleanedRun
	var errs []error
	for _, e := range ents {
		m := &mountRun{dir: filepath.Join(MountDir, e.Name())}
		if !e.IsDir() || m.owner() == 0 || batch.DevbulkRunning(m.owner()) {
			continue
		}
		n, err := m.remove()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		done = append(done, CleanedRun{Dir: m.dir, Namespaces: n})
	}
	return done, errors.Join(errs...)
}
