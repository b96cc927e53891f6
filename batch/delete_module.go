package batch

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/devbulk/devbulk"

	"golang.org/x/sys/unix"

	"github.com/devbulk/devbulk/devices"
	"github.com/devbulk/devbulk/kmod"
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
// are excepted while they are down; one that is up is someone's. t is
// where the set lives; its Dialer (or NS) reaches the others. Namespaces
// are found through /proc (threads, open descriptors, bind mounts of every
// mount namespace): a namespace held only by a socket is missed, which
// docs/safety.md states.
func ForeignDevices(k *devices.Kind, s *Set, t Target) ([]string, error) {
	dl := t.dialer()
	if dl == nil {
		return nil, errNoDialer("the module strategy")
	}
	paths, err := dl.Everywhere()
	if err != nil {
		return nil, err
	}
	kinds := devices.KindsOfModule(k.Module)
	var foreign []string
	var away map[int32]int32 // the set's veths here whose peer a move left in another namespace: the peer's ifindex there
	for _, path := range append([]string{""}, paths...) {
		links, self, err := listLinks(dl, path)
		if errors.Is(err, ErrNamespaceGone) {
			continue // gone meanwhile
		}
		if err != nil {
			return nil, fmt.Errorf("listing links of netns %s: %w", path, err)
		}
		var ours map[int32]bool // the set's devices here, and their veth peers, made with them
		if path == "" {
			owns := s.owner()
			mine := slices.DeleteFunc(slices.Clone(links), func(l nlbatch.Link) bool { return !owns(l) })
			ours, away = s.ours(mine, links), awayPeers(mine)
		}
		for _, l := range links {
			if !slices.Contains(kinds, l.Kind) || (devices.IsFallback(k.Module, l.Name) && l.Flags&unix.IFF_UP == 0) || ours[l.Index] ||
				path != "" && l.HasParentNetns && l.ParentNetnsID == self && away[l.Parent] == l.Index {
				continue
			}
			foreign = append(foreign, fmt.Sprintf("%s (netns %s)", l.Name, cmp.Or(path, "of the run")))
		}
	}
	slices.Sort(foreign)
	return slices.Compact(foreign), nil
}

// listLinks lists the links of the namespace at path ("" the set's) and,
// for another one holding links on a device elsewhere, the set's
// namespace's id there (-1 otherwise).
func listLinks(dl Dialer, path string) ([]nlbatch.Link, int32, error) {
	c, err := dl.Dial(path, nlbatch.Options{RcvBuf: 1 << 20})
	if err != nil {
		return nil, -1, err
	}
	defer c.Close()
	links, err := c.ScanLinks()
	if err != nil || path == "" || !slices.ContainsFunc(links, func(l nlbatch.Link) bool { return l.HasParentNetns }) {
		return links, -1, err
	}
	self, err := c.NetnsID(dl.Self())
	return links, self, err
}

// ModuleOptions are the module strategy's own.
type ModuleOptions struct {
	// UnloadLower unloads the module of the lower devices devbulk created
	// (rmmod dummy under a thousand vlans) rather than the kind's own.
	UnloadLower bool
}

// Strategy names the strategy that takes them.
func (ModuleOptions) Strategy() string { return string(DeleteModule) }

// module unloads the module of the set's kind (or, with
// ModuleOptions.UnloadLower, of its lower devices): the kernel unregisters
// every device of its kinds, in every namespace, in one batch.
func init() {
	register(DeleteModule, &strategy{
		order:    7,
		oneBatch: true,
		unloads:  true,
		shared:   "one unload takes every namespace's devices",
		machine: func(k, lower *devices.Kind, own Own) error {
			if mod := unloaded(k, lower, own); mod != nil {
				return ModuleLoaded(mod)
			}
			return errors.New("unloading the lower devices' module: the links have no lower devices")
		},
		ready: func(t Target, s *Set, o DeleteOptions) error {
			if t.dialer() == nil {
				return errNoDialer("the module strategy")
			}
			if unloadsLower(o.Own) && len(s.Lowers) == 0 {
				return errors.New("unloading the lower devices' module: devbulk created no lower devices")
			}
			return nil
		},
		tearDown: func(ctx context.Context, d *job) error {
			d.p.Module = unloaded(d.s.Kind, d.s.LowerKind, d.o.Own).Module
			return d.delete(ctx, false, deleteModule)
		},
	})
}

func unloadsLower(own Own) bool {
	m, ok := own.(ModuleOptions)
	return ok && m.UnloadLower
}

// unloaded is the kind whose module the strategy unloads: the links' own,
// or their lower devices' (nil: none) with ModuleOptions.UnloadLower.
func unloaded(kind, lower *devices.Kind, own Own) *devices.Kind {
	if unloadsLower(own) {
		return lower
	}
	return kind
}

// deleteModule unloads the module. The scan for devices that are not the
// set's runs right before the unload, after the record is marked, so that
// the window in which another process could make one is as short as
// devbulk can make it. Lower devices of another kind, which the unload
// leaves, are deleted afterwards (outside the phase), and the module stays
// unloaded, unless the delete is a DeleteOptions.Cycle.
func deleteModule(ctx context.Context, d *job) (_ map[int32]bool, err error) {
	mod := unloaded(d.s.Kind, d.s.LowerKind, d.o.Own)
	if d.o.Cycle {
		defer func() {
			if ModuleLoaded(mod) != nil {
				err = errors.Join(err, reloadModule(mod))
			}
		}()
	}
	if err := d.first(); err != nil {
		return nil, err
	}
	foreign, err := ForeignDevices(mod, d.s, d.t)
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
	if unloadsLower(d.o.Own) || len(d.s.Lowers) == 0 {
		return confirmed, nil
	}
	_, lowers := d.s.split(d.mine)
	if d.o.Cycle {
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

// reloadModule loads a kind's module again after a module delete, so that
// the kind can be created again (a bench's next cycle).
func reloadModule(k *devices.Kind) error {
	ix, err := kmod.Open(kmod.Dir())
	if err != nil {
		return fmt.Errorf("reloading %s: %w", k.Module, err)
	}
	return ix.Load(k.Module, k.ModuleParams)
}
