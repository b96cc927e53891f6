package devices

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/devbulk/devbulk"

	"golang.org/x/sys/unix"

	"github.com/devbulk/devbulk/kmod"
	"github.com/devbulk/devbulk/namespace"
	"github.com/devbulk/devbulk/nlbatch"
)

// Support is whether this kernel can create a kind, and why not.
type Support struct {
	Kind *Kind
	OK   bool
	// Err says why not (nil when OK); it matches devbulk.ErrNotSupported.
	Err error
}

// Probe tries to create one link of each kind (every kind when none are
// given, and dummy and ifb too where a kind needs a lower device) in a
// scratch network namespace, which the kernel dismantles afterwards. A
// missing module is loaded as `ip link add` would have the kernel load it
// (devbulk loads it itself where there is no modprobe, as in its VM).
func Probe(kinds ...*Kind) ([]Support, error) {
	if len(kinds) == 0 {
		kinds = All()
	}
	for _, k := range kinds {
		if k.NeedsLower {
			kinds = append([]*Kind{Dummy, Ifb}, kinds...)
			break
		}
	}
	ns, err := namespace.Unshare()
	if err != nil {
		return nil, err
	}
	defer ns.Close()
	c, err := nlbatch.Dial(ns, nlbatch.Options{})
	if err != nil {
		return nil, err
	}
	defer c.Close()

	var out []Support
	ok := map[string]bool{}
	seen := map[*Kind]bool{}
	for i, k := range kinds {
		if seen[k] {
			continue
		}
		seen[k] = true
		s := Support{Kind: k}
		err := probeOne(c, k, fmt.Sprintf("probe%d", i), ok)
		if errors.Is(err, unix.EOPNOTSUPP) {
			// Not built in: load the module ourselves (a minimal VM has no
			// modprobe for the kernel to call), then try again.
			if lerr := loadModule(k); lerr != nil {
				err = lerr
			} else {
				err = probeOne(c, k, fmt.Sprintf("probe%db", i), ok)
			}
		}
		if err == nil {
			s.OK = true
			ok[k.Name] = true
		} else {
			s.Err = notSupported(k, err)
		}
		out = append(out, s)
	}
	return out, nil
}

// Require fails, with an error that matches devbulk.ErrNotSupported, when
// sup says this kernel cannot create one of kinds.
func Require(sup []Support, kinds ...*Kind) error {
	for _, s := range sup {
		if !s.OK && slices.Contains(kinds, s.Kind) {
			return fmt.Errorf("this kernel cannot create %s: %w", s.Kind.Name, s.Err)
		}
	}
	return nil
}

// Works maps each probed kind's name to whether this kernel can create it.
func Works(sup []Support) map[string]bool {
	works := map[string]bool{}
	for _, s := range sup {
		works[s.Kind.Name] = s.OK
	}
	return works
}

func probeOne(c *nlbatch.Conn, k *Kind, name string, ok map[string]bool) error {
	o := Options{Count: 1, Prefix: name}
	if k.NeedsLower {
		lk := LowerKind(ok)
		if lk == nil {
			return errors.New("no kind usable as lower device (dummy or ifb)")
		}
		lower := Link{Kind: lk, Name: name + "l"}
		if err := c.Do(context.Background(), lower.Message()); err != nil {
			return fmt.Errorf("lower device: %w", err)
		}
		l, err := c.LinkByName(lower.Name)
		if err != nil {
			return err
		}
		o.Lowers = []Lower{{Index: l.Index, Name: l.Name}}
	}
	links, err := k.Plan(o)
	if err != nil {
		return err
	}
	return c.Do(context.Background(), links[0].Message())
}

// LowerKind picks the kind devbulk creates as lower devices, among those
// known to work (by name): the first of LowerKinds.
func LowerKind(works map[string]bool) *Kind {
	for _, k := range LowerKinds() {
		if works[k.Name] {
			return k
		}
	}
	return nil
}

// loadModule loads the kind's module and its dependencies from the running
// kernel's module directory, with parameters that keep the module from
// creating devices of its own.
func loadModule(k *Kind) error {
	if _, err := os.Stat("/proc/modules"); err != nil {
		return fmt.Errorf("not built in and this kernel cannot load modules; needs %s=y", k.Config)
	}
	ix, err := kmod.Open(kmod.Dir())
	if err != nil {
		return fmt.Errorf("not built in and no module directory (%s); needs %s", kmod.Dir(), k.Config)
	}
	if _, err := ix.Files(k.Module); err != nil {
		return fmt.Errorf("not built in and no %s module in %s; needs %s", k.Module, kmod.Dir(), k.Config)
	}
	if err := ix.Load(k.Module, k.ModuleParams); err != nil {
		return fmt.Errorf("not built in, and %v", err)
	}
	return nil
}

func notSupported(k *Kind, err error) error {
	if errors.Is(err, unix.EOPNOTSUPP) {
		return devbulk.NotSupported("module %s loaded but the kind is still unknown; needs %s", k.Module, k.Config)
	}
	return devbulk.NotSupported("%w", err)
}

// Ready fails when this kernel cannot create links of kind k (Probe loads
// a module it can), and returns the kind for k's lower devices (nil when
// none can be created here).
func Ready(k *Kind) (lower *Kind, err error) {
	sup, err := Probe(k)
	if err != nil {
		return nil, fmt.Errorf("probing kinds: %w", err)
	}
	if err := Require(sup, k); err != nil {
		return nil, err
	}
	return LowerKind(Works(sup)), nil
}

// LowerKinds lists the kinds devbulk makes as lower devices, first choice
// first (Kind.LowerChoice).
func LowerKinds() []*Kind {
	out := Where(func(k *Kind) bool { return k.LowerChoice > 0 })
	slices.SortFunc(out, func(a, b *Kind) int { return a.LowerChoice - b.LowerChoice })
	return out
}
