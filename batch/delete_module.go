package batch

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/devbulk/devbulk"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/devbulk/devbulk/devices"
	"github.com/devbulk/devbulk/kmod"
	"github.com/devbulk/devbulk/namespace"
	"github.com/devbulk/devbulk/nlbatch"
)

// DeleteModule unloads the kind's module.
const DeleteModule DeleteStrategy = "module"

// ModuleLoaded reports whether the kind's module is loaded as a module, or
// why the module strategy cannot apply.
func ModuleLoaded(k *devices.Kind) error {
	loaded, err := kmod.Loaded(k.Module)
	switch {
	case err != nil:
		return devbulk.NotSupported("%w, so %s cannot be unloaded", err, k.Module)
	case !loaded:
		return devbulk.NotSupported("%s is built into this kernel or not loaded, so it cannot be unloaded", k.Module)
	}
	return nil
}

// ForeignDevices lists, in every network namespace this machine has, the
// devices of the kind's module that are not the set's: unloading the module
// would remove them too. The module's own fallback devices (tunl0, gre0, ...)
// are excepted while they are down; one that is up is someone's. ours is the
// namespace the set lives in. Namespaces are found through /proc (threads,
// open descriptors, bind mounts of every mount namespace): a namespace held
// only by a socket is missed, which docs/safety.md states.
func ForeignDevices(k *devices.Kind, s *Set, ours netns.NsHandle) ([]string, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(ours), &st); err != nil {
		return nil, err
	}
	kinds := devices.KindsOfModule(k.Module)
	owns := s.owner()
	var foreign []string
	for ino, path := range namespace.Discover() {
		ns, err := namespace.OpenForSocket(path)
		if err != nil {
			continue // gone meanwhile
		}
		links, err := listLinks(ns.Handle)
		ns.Close()
		if err != nil {
			return nil, fmt.Errorf("listing links of netns %s: %w", path, err)
		}
		var ours map[int32]bool // the set's devices here, and their veth peers, made with them
		if ino == st.Ino {
			ours = s.ours(slices.DeleteFunc(slices.Clone(links), func(l nlbatch.Link) bool { return !owns(l) }), links)
		}
		for _, l := range links {
			if !slices.Contains(kinds, l.Kind) || (devices.IsFallback(k.Module, l.Name) && l.Flags&unix.IFF_UP == 0) {
				continue
			}
			if ours[l.Index] {
				continue
			}
			foreign = append(foreign, fmt.Sprintf("%s (netns %s)", l.Name, path))
		}
	}
	slices.Sort(foreign)
	return slices.Compact(foreign), nil
}

func listLinks(ns netns.NsHandle) ([]nlbatch.Link, error) {
	c, err := nlbatch.Dial(ns, nlbatch.Options{RcvBuf: 1 << 20})
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.ScanLinks()
}

// module unloads the module of the set's kind (or, with
// DeleteOptions.UnloadLower, of its lower devices): the kernel unregisters
// every device of its kinds, in every namespace, in one batch.
func init() {
	register(DeleteModule, &strategy{
		order:    7,
		oneBatch: true,
		ready: func(_ Target, s *Set, o DeleteOptions) error {
			mod := UnloadedKind(s.Kind, s.LowerKind, o.UnloadLower)
			if o.UnloadLower && (mod == nil || len(s.Lowers) == 0) {
				return errors.New("unloading the lower devices' module: devbulk created no lower devices")
			}
			return ModuleLoaded(mod)
		},
		module: func(s *Set, o DeleteOptions) *devices.Kind { return UnloadedKind(s.Kind, s.LowerKind, o.UnloadLower) },
		run:    deleteModule,
	})
}

// UnloadedKind is the kind whose module the module strategy unloads: the
// run's own kind, or with unloadLower (DeleteOptions.UnloadLower) the kind
// of its lower devices.
func UnloadedKind(kind, lower *devices.Kind, unloadLower bool) *devices.Kind {
	if unloadLower {
		return lower
	}
	return kind
}

// deleteModule unloads the module. The scan for devices that are not the
// set's runs right before the unload, after the record is marked, so that
// the window in which another process could make one is as short as
// devbulk can make it. Lower devices of another kind, which the unload
// leaves, are deleted afterwards (outside the phase) unless
// DeleteOptions.KeepLowers.
func deleteModule(ctx context.Context, d *deletion) (map[int32]bool, error) {
	mod := UnloadedKind(d.s.Kind, d.s.LowerKind, d.o.UnloadLower)
	if err := d.first(); err != nil {
		return nil, err
	}
	foreign, err := ForeignDevices(mod, d.s, d.t.NS)
	if err != nil {
		return nil, err
	}
	if len(foreign) > 0 {
		return nil, fmt.Errorf("refusing to unload %s: it would delete devices devbulk did not create: %s",
			mod.Module, nameList(foreign))
	}
	// The phase is the unload, as rmmod times it: the scan of every
	// namespace above is devbulk's safety (tens to hundreds of ms under
	// emulation), not the kernel's work.
	d.restart()
	if err := unloadModule(mod); err != nil {
		return nil, err
	}
	d.stop()
	confirmed := indexes(d.mine)
	if d.o.UnloadLower || len(d.s.Lowers) == 0 {
		return confirmed, nil
	}
	_, lowers := d.s.split(d.mine)
	if d.o.KeepLowers {
		d.kept = indexes(d.s.Lowers)
		return confirmed, nil
	}
	// The lower devices are of another kind; the unload left them.
	more, err := d.each(context.WithoutCancel(ctx), oneByOne{c: d.t.Conn, devs: lowers, p: &Phase{}})
	maps.Copy(confirmed, more)
	return confirmed, err
}

// unloadModule removes the kind's module. ForeignDevices must have come
// back empty.
func unloadModule(k *devices.Kind) error {
	err := kmod.Unload(k.Module)
	if errors.Is(err, unix.EWOULDBLOCK) || errors.Is(err, unix.EBUSY) {
		return devbulk.NotSupported("%s is in use by something other than devbulk's devices: %w", k.Module, err)
	}
	return err
}

// ReloadModule loads a kind's module again after a module delete, so that
// the kind can be created again (a bench's next cycle).
func ReloadModule(k *devices.Kind) error {
	ix, err := kmod.Open(kmod.Dir())
	if err != nil {
		return fmt.Errorf("reloading %s: %w", k.Module, err)
	}
	return ix.Load(k.Module, k.ModuleParams)
}
