package batch

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/devbulk/devbulk/devices"
	"github.com/devbulk/devbulk/kmod"
	"github.com/devbulk/devbulk/nlbatch"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// ErrUnsupported marks what this kernel or machine cannot do (exit code 4).
var ErrUnsupported = errors.New("unsupported here")

// ModuleLoaded reports whether the kind's module is loaded as a module, or
// why the module strategy cannot apply.
func ModuleLoaded(k *devices.Kind) error {
	loaded, err := kmod.Loaded(k.Module)
	switch {
	case err != nil:
		return fmt.Errorf("%w: %v, so %s cannot be unloaded", ErrUnsupported, err, k.Module)
	case !loaded:
		return fmt.Errorf("%w: %s is built into this kernel or not loaded, so it cannot be unloaded", ErrUnsupported, k.Module)
	}
	return nil
}

// ForeignDevices lists, in every network namespace this machine has, the
// devices of the kind's module that are not the set's (fallback devices such
// as tunl0 excepted): unloading the module would remove them too.
// ours is the namespace the set lives in.
func ForeignDevices(k *devices.Kind, s *Set, ours netns.NsHandle) ([]string, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(ours), &st); err != nil {
		return nil, err
	}
	kinds := devices.KindsOfModule(k.Module)
	owns := s.owner()
	var foreign []string
	for ino, path := range namespaces() {
		ns, err := netns.GetFromPath(path)
		if err != nil {
			continue // gone meanwhile
		}
		links, err := listLinks(ns)
		ns.Close()
		if err != nil {
			return nil, fmt.Errorf("listing links of netns %s: %w", path, err)
		}
		for _, l := range links {
			if !slices.Contains(kinds, l.Kind) || devices.IsFallback(l.Name) {
				continue
			}
			if ino == st.Ino && owns(l) {
				continue
			}
			foreign = append(foreign, fmt.Sprintf("%s (netns %s)", l.Name, path))
		}
	}
	slices.Sort(foreign)
	return foreign, nil
}

func listLinks(ns netns.NsHandle) ([]nlbatch.Link, error) {
	c, err := nlbatch.Dial(ns, nlbatch.Options{RcvBuf: 1 << 20})
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.Links()
}

// namespaces finds every network namespace reachable from /proc: those of
// every thread, those held open by file descriptors, and bind mounts (as
// made by `ip netns add`). Keys are nsfs inode numbers.
func namespaces() map[uint64]string {
	found := map[uint64]string{}
	add := func(path string) {
		var st unix.Stat_t
		if unix.Stat(path, &st) == nil {
			if _, ok := found[st.Ino]; !ok {
				found[st.Ino] = path
			}
		}
	}
	tasks, _ := filepath.Glob("/proc/[0-9]*/task/[0-9]*/ns/net")
	for _, p := range tasks {
		add(p)
	}
	fds, _ := filepath.Glob("/proc/[0-9]*/fd/*")
	for _, p := range fds {
		if target, err := os.Readlink(p); err == nil && strings.HasPrefix(target, "net:[") {
			add(p)
		}
	}
	if f, err := os.Open("/proc/self/mountinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if i := slices.Index(fields, "-"); i > 4 && i+1 < len(fields) && fields[i+1] == "nsfs" {
				add(fields[4])
			}
		}
		f.Close()
	}
	return found
}

// FindNetns returns a path to the network namespace with nsfs inode ino, if
// any thread, file descriptor or bind mount still holds it.
func FindNetns(ino uint64) (string, bool) {
	path, ok := namespaces()[ino]
	return path, ok
}

// unloadModule removes the kind's module: the kernel unregisters every
// device of its kinds, in every namespace, in one batch.
// ForeignDevices must have come back empty.
func unloadModule(k *devices.Kind) error { return kmod.Unload(k.Module) }

// reloadModule loads the kind's module again after a module delete, so the
// next cycle can create the kind.
func reloadModule(k *devices.Kind) error {
	ix, err := kmod.Open(kmod.Dir())
	if err != nil {
		return fmt.Errorf("reloading %s: %w", k.Module, err)
	}
	return ix.Load(k.Module, k.ModuleParams)
}
