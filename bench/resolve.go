package bench

import (
	"fmt"
	"slices"

	"github.com/devbulk/devbulk"
	"github.com/devbulk/devbulk/batch"
	"github.com/devbulk/devbulk/devices"
)

// Resolve fills in what the machine decides, probing in a scratch
// namespace: the kind when none is given (dummy, else ifb: the cheapest to
// create and delete) and, unless given, the kind of the lower devices. It
// refuses, with an error that matches devbulk.ErrNotSupported, a kind (or
// lower kind) this kernel cannot create and a module strategy whose module
// cannot be unloaded (the lower kind's, with batch.ModuleOptions.UnloadLower:
// what a strategy needs of the machine, batch.DeleteStrategy.Machine); a delete strategy
// that does not apply to the kind, with an error that matches
// batch.ErrNotApplicable; and moves of a kind the kernel keeps where it was
// made (devbulk.ErrNotSupported); and a spread (Options.Namespaces) with
// what it cannot run beside (batch.ErrConflict, batch.ErrNotApplicable).
func (o *Options) Resolve() error {
	if err := o.strategiesApply(); err != nil { // before probing
		return err
	}
	if err := o.spreadApplies(); err != nil {
		return err
	}
	var given []*devices.Kind
	for _, k := range []*devices.Kind{o.Kind, o.Lower} {
		if k != nil {
			given = append(given, k)
		}
	}
	probe := given
	if o.Kind == nil { // the default kinds; devices.Probe adds them for a kind that needs a lower device
		probe = append(probe, devices.LowerKinds()...)
	}
	sup, err := devices.Probe(probe...)
	if err != nil {
		return fmt.Errorf("probing kinds: %w", err)
	}
	if err := devices.Require(sup, given...); err != nil {
		return err
	}
	works := devices.Works(sup)
	if o.Kind == nil {
		if o.Kind = devices.LowerKind(works); o.Kind == nil {
			return devbulk.NotSupported("neither dummy nor ifb can be created here; pick a kind with --kind (see devbulk kinds)")
		}
	}
	if o.Lower == nil {
		o.Lower = devices.LowerKind(works)
	}
	if err := o.fits(); err != nil {
		return err
	}
	for _, d := range o.Deletes {
		if err := d.Machine(o.Kind, o.Lower, batch.OwnFor(o.Own, string(d))); err != nil {
			return err
		}
	}
	return nil
}

// fits refuses, unless o.Force, counts whose devices would not fit in the
// memory available now (the largest count: cycles run one after another,
// each releasing its devices).
func (o *Options) fits() error {
	if o.Force || len(o.Counts) == 0 {
		return nil
	}
	var lower *devices.Kind
	if o.Kind.NeedsLower {
		lower = o.Lower
	}
	return devices.FitsNow(o.Kind, lower, slices.Max(o.Counts))
}

// strategiesApply checks that every delete strategy applies to the kind in
// bench's own namespace (without one, to the default kinds: they share
// what applies to them).
func (o *Options) strategiesApply() error {
	k := o.Kind
	if k == nil {
		k = devices.LowerKinds()[0]
	}
	for _, d := range o.Deletes {
		if err := d.Applies(k, true); err != nil {
			return err
		}
	}
	for _, m := range o.Moves {
		if err := m.Applies(k, k.NeedsLower); err != nil { // bench makes the lower devices itself
			return fmt.Errorf("--move %s: %s: %w", m, k.Name, err)
		}
	}
	if k.Peers && len(o.Moves) > 0 && slices.ContainsFunc(o.Deletes, batch.DeleteStrategy.UnloadsModules) {
		return fmt.Errorf("%w: --delete module after a move: the %s peers stay in the first namespace, where the module strategy counts them as others'", batch.ErrNotApplicable, k.Name)
	}
	return nil
}
