package bystander

import (
	"fmt"
	"slices"

	"github.com/vishvananda/netns"

	"github.com/devbulk/devbulk"
	"github.com/devbulk/devbulk/devices"
	"github.com/devbulk/devbulk/namespace"
	"github.com/devbulk/devbulk/nlbatch"
)

// Start makes the prober's throwaway namespace (and, for an operation that
// needs one, a second for peers) and starts issuing operations. avoid are
// the modules the caller may unload: the unload would take the prober's
// devices (and refuse to, seeing them), so the link operation creates the
// cheapest kind this kernel has (dummy, else ifb, probed) whose module is
// not one of them, and an operation whose own kind's module is one is
// refused. The namespaces are held by file descriptors only: they go with
// devbulk, even on kill -9.
func Start(cfg Config, avoid ...string) (*Prober, error) {
	sp := ops.At(cfg.Op)
	if sp == nil {
		return nil, fmt.Errorf("%w: unknown operation %q", ErrBad, cfg.Op)
	}
	var kind *devices.Kind
	var err error
	switch {
	case sp.makes != nil && slices.Contains(avoid, sp.makes.Module):
		return nil, devbulk.Mark(ErrBad, "the %s bystander makes %s devices, and this run unloads %s, which would take them", cfg.Op, sp.makes.Name, sp.makes.Module)
	case sp.needsKind:
		if kind, err = linkKind(avoid); err != nil {
			return nil, err
		}
	}
	e, err := newEnv(sp, kind)
	if err != nil {
		return nil, fmt.Errorf("the bystander's namespace: %w", err)
	}
	do, err := sp.make(e)
	if err != nil {
		e.release()
		return nil, err
	}
	p := newProber(cfg, realClock{})
	p.release = e.release
	go p.loop(do)
	return p, nil
}

// linkKind is the kind the link operation creates: the first of the lower
// kinds (dummy, ifb) that this kernel creates and whose module is not one
// of avoid.
func linkKind(avoid []string) (*devices.Kind, error) {
	sup, err := devices.Probe(devices.LowerKinds()...)
	if err != nil {
		return nil, fmt.Errorf("the bystander's kind: %w", err)
	}
	works := devices.Works(sup)
	for _, k := range devices.LowerKinds() {
		if works[k.Name] && !slices.Contains(avoid, k.Module) {
			return k, nil
		}
	}
	return nil, devbulk.NotSupported("the bystander creates %s, and here none is left that this run does not unload", devices.NamesOf(devices.LowerKinds()))
}

// newEnv makes the operation's namespaces, held by descriptors alone, and a
// socket in the first; release closes them (the kernel then dismantles
// the namespaces with what is in them, without devbulk waiting).
func newEnv(sp *spec, kind *devices.Kind) (*env, error) {
	ns, err := namespace.Unshare()
	if err != nil {
		return nil, err
	}
	e := &env{ns: ns, peer: netns.None(), kind: kind}
	if e.conn, err = nlbatch.Dial(ns, nlbatch.Options{}); err != nil {
		e.release()
		return nil, err
	}
	if sp.peer {
		if e.peer, err = namespace.Unshare(); err != nil {
			e.release()
			return nil, err
		}
	}
	return e, nil
}

// release closes the environment's socket and namespaces.
func (e *env) release() {
	if e.conn != nil {
		e.conn.Close()
	}
	e.ns.Close()
	e.peer.Close()
}
