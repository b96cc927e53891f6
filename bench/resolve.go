package bench

import (
	"fmt"

	"github.com/devbulk/devbulk"
	"github.com/devbulk/devbulk/batch"
	"github.com/devbulk/devbulk/devices"
)

// Resolve fills in what the machine decides, probing in a scratch
// namespace: the kind when none is given (dummy, else ifb: the cheapest to
// create and delete) and the kind of the lower devices. It refuses, with an
// error that matches devbulk.ErrNotSupported, a kind this kernel cannot
// create and a module strategy whose module cannot be unloaded.
func (o *Options) Resolve() error {
	kinds := []*devices.Kind{devices.Dummy, devices.Ifb} // the default kinds, and lower devices
	if o.Kind != nil {
		kinds = append(kinds, o.Kind)
	}
	sup, err := devices.Probe(kinds...)
	if err != nil {
		return fmt.Errorf("probing kinds: %w", err)
	}
	works := map[string]bool{}
	for _, s := range sup {
		works[s.Kind.Name] = s.OK
		if s.Kind == o.Kind && !s.OK {
			return fmt.Errorf("this kernel cannot create %s: %w", o.Kind.Name, s.Err)
		}
	}
	if o.Kind == nil {
		if o.Kind = devices.LowerKind(works); o.Kind == nil {
			return devbulk.NotSupported("neither dummy nor ifb can be created here; pick a kind with --kind (see devbulk kinds)")
		}
	}
	o.Lower = devices.LowerKind(works)
	for _, d := range o.Deletes {
		if d == batch.DeleteModule {
			unloaded := o.Kind
			if o.UnloadLower {
				unloaded = o.Lower
			}
			return batch.ModuleLoaded(unloaded)
		}
	}
	return nil
}
