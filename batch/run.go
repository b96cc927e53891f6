package batch

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/devbulk/devbulk"

	"github.com/devbulk/devbulk/devices"
	"github.com/devbulk/devbulk/namespace"
	"github.com/devbulk/devbulk/nlbatch"
)

// CreateOptions describe a create for scripted use in an existing namespace.
type CreateOptions struct {
	Kind     *devices.Kind
	Devices  devices.Options // Group and Lowers are filled in
	Strategy CreateStrategy
	// Parents are existing lower devices, by name, for vlan and macvlan;
	// when empty devbulk creates its own, of kind Lower.
	Parents []string
	Lower   *devices.Kind
	// NS is the namespace c is bound to (its name for errors).
	NS namespace.NS
	// Ledger records the run's ownership (nil: nowhere).
	Ledger Ledger
	// Force creates devices the kernel memory estimate says would not fit
	// (devices.Fits).
	Force bool
	// Progress, when set, gets the number of links created so far.
	Progress func(done int)
}

// CreateIn creates a run's devices through c, having its ownership kept
// before and after (o.Ledger). On failure or cancellation it deletes what it
// created (by group, with the checks of Delete) and has the ledger forget it, so
// nothing is left behind; when the undo fails the kept ownership stays for
// `devbulk cleanup`, and the returned set is not nil.
func CreateIn(ctx context.Context, c *nlbatch.Conn, o CreateOptions) (Phase, *Set, error) {
	p := Phase{Name: "create", Tool: "devbulk", Strategy: string(o.Strategy), Devices: o.Devices.Count}
	if err := o.fits(); err != nil {
		return p, nil, err
	}
	links, lowers, set, err := planRun(c, &o)
	if err != nil {
		return p, nil, err
	}
	ledger := ledgerOr(o.Ledger)
	if err := ledger.Keep(set, false); err != nil {
		return p, nil, fmt.Errorf("saving the run record: %w", err)
	}
	undo := func(cause error) (Phase, *Set, error) {
		left, err := o.undo(ctx, c, set, cause)
		return p, left, err
	}
	if len(lowers) > 0 {
		if set.Lowers, err = createLowers(ctx, c, lowers); err != nil {
			return undo(err)
		}
		o.Devices.Lowers = AsLowers(set.Lowers)
		if links, err = o.Kind.Plan(o.Devices); err != nil {
			return undo(err)
		}
	}
	p, found, err := Create(ctx, c, links, RequestOptions{Strategy: o.Strategy, Echo: true, Progress: o.Progress})
	switch {
	case err != nil:
		return undo(err)
	case ctx.Err() != nil:
		return undo(ctx.Err())
	case p.Failed > 0:
		return undo(devbulk.Mark(p.firstErr, "%d of %d links not created, first errors: %s", p.Failed, len(links), strings.Join(p.Errors, "; ")))
	}
	set.Links = found
	if err := ledger.Keep(set, true); err != nil {
		return undo(err)
	}
	return p, set, nil
}

// fits refuses, unless o.Force, a run whose devices (and the lower devices
// devbulk would make) would not fit in the memory available now.
func (o CreateOptions) fits() error {
	if o.Force {
		return nil
	}
	var lower *devices.Kind
	if o.Kind.NeedsLower && len(o.Parents) == 0 {
		lower = o.Lower
	}
	return devices.FitsNow(o.Kind, lower, o.Devices.Count)
}

// planRun plans a run in c's namespace as it is now: a fresh group, what
// its kind picks free (a vxlan's VNIs), the lower devices (chosen or
// planned, in lowers), every name free.
// Advisory: a scan beside a busy creator sees too much rather than too
// little, and the kernel refuses a name in use (EEXIST) whatever it saw.
func planRun(c *nlbatch.Conn, o *CreateOptions) (links, lowers []devices.Link, set *Set, err error) {
	existing, err := c.ScanLinks()
	if err != nil {
		return nil, nil, nil, err
	}
	o.Devices.Group = FreshGroup(existing, ledgerOr(o.Ledger).Taken)
	if err := o.Kind.Pick(existing, &o.Devices); err != nil {
		return nil, nil, nil, devbulk.Mark(ErrConflict, "%w", err)
	}
	if o.Kind.NeedsLower {
		if o.Devices.Lowers, lowers, err = chooseLowers(*o, existing); err != nil {
			return nil, nil, nil, err
		}
	}
	if links, err = o.Kind.Plan(o.Devices); err != nil {
		return nil, nil, nil, err
	}
	if err := namesFree(existing, links, lowers); err != nil {
		return nil, nil, nil, err
	}
	set = &Set{Kind: o.Kind, Group: o.Devices.Group, Prefix: o.Devices.Prefix}
	if len(lowers) > 0 {
		set.LowerKind = o.Lower
	}
	return links, lowers, set, nil
}

// undo deletes what a failed create made, found by the run's group and
// names (Adopt: a dump sees every device, where a lookup's answer can be
// lost), and forgets the run. The kept ownership stays (for devbulk
// cleanup) whenever that cannot be done, marks included: the set is then
// returned.
func (o CreateOptions) undo(ctx context.Context, c *nlbatch.Conn, set *Set, cause error) (*Set, error) {
	set.Links, set.Lowers = nil, nil
	ledger := ledgerOr(o.Ledger)
	dp, out, err := Delete(context.WithoutCancel(ctx), Target{Conn: c, NS: o.NS}, set, DeleteGroup, DeleteOptions{Ledger: undoing{ledger}})
	if err == nil && !out.Settled {
		err = errors.New("the undo could not check what is left")
	}
	if err != nil {
		return set, fmt.Errorf("%w; undoing it failed too (devbulk cleanup retries): %w", cause, err)
	}
	if errors.Is(cause, context.Canceled) {
		lowers := ""
		if o.Kind.NeedsLower && len(o.Parents) == 0 {
			lowers = " (their lower devices too)"
		}
		cause = fmt.Errorf("the create: the %d %s links made by then were deleted again%s, nothing is left: %w", dp.Deleted, o.Kind.Name, lowers, cause)
	}
	if err := ledger.Forget(); err != nil {
		return nil, errors.Join(cause, err)
	}
	return nil, cause
}

// PrepareLowers creates the lower devices that the links of kind k planned
// with o (its Count, Prefix, Group and Up) need, of kind lower, named
// PREFIXl0.., and returns them as the kernel made them (AsLowers gives
// devices.Options.Lowers): a bench makes them before the phase it measures.
func PrepareLowers(ctx context.Context, c *nlbatch.Conn, k, lower *devices.Kind, o devices.Options) ([]nlbatch.Link, error) {
	lowers, err := planLowers(k, lower, o)
	if err != nil {
		return nil, err
	}
	return createLowers(ctx, c, lowers)
}

// AsLowers is created lower devices as the plans of their uppers name them.
func AsLowers(links []nlbatch.Link) []devices.Lower {
	out := make([]devices.Lower, len(links))
	for i, l := range links {
		out[i] = devices.Lower{Index: l.Index, Name: l.Name}
	}
	return out
}

// planLowers plans the lower devices that the links of kind k planned with
// o need, named PREFIXl0.., of kind lower, in the same group.
func planLowers(k, lower *devices.Kind, o devices.Options) ([]devices.Link, error) {
	if lower == nil {
		return nil, devbulk.NotSupported("%s needs a lower device kind, and none can be created here", k.Name)
	}
	return lower.Plan(devices.Options{Count: k.LowersNeeded(o.Count), Prefix: o.Prefix + "l", Group: o.Group, Up: o.Up})
}

// createLowers creates planned lower devices and returns them, in order,
// as the kernel made them.
func createLowers(ctx context.Context, c *nlbatch.Conn, lowers []devices.Link) ([]nlbatch.Link, error) {
	p, found, err := Create(ctx, c, lowers, RequestOptions{Strategy: CreatePipelined, Echo: true})
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if p.Failed > 0 {
		return nil, fmt.Errorf("creating lower devices: %s", strings.Join(p.Errors, "; "))
	}
	return found, nil
}

// chooseLowers resolves the parents given by name, or plans devbulk's own
// lower devices (their indexes are filled in once they exist).
func chooseLowers(o CreateOptions, existing []nlbatch.Link) ([]devices.Lower, []devices.Link, error) {
	need := o.Kind.LowersNeeded(o.Devices.Count)
	if len(o.Parents) == 0 {
		lowers, err := planLowers(o.Kind, o.Lower, o.Devices)
		if err != nil {
			return nil, nil, err
		}
		out := make([]devices.Lower, len(lowers))
		for i, l := range lowers {
			out[i] = devices.Lower{Name: l.Name}
		}
		return out, lowers, nil
	}
	if len(o.Parents) < need {
		return nil, nil, devbulk.Mark(ErrConflict, "%d %s links need %d parents (%d per parent), got %d",
			o.Devices.Count, o.Kind.Name, need, o.Kind.PerLower, len(o.Parents))
	}
	var out []devices.Lower
	for i, name := range o.Parents {
		if slices.Contains(o.Parents[:i], name) {
			return nil, nil, devbulk.Mark(ErrConflict, "--parent %s given twice", name)
		}
		l, ok := findName(existing, name)
		if !ok {
			return nil, nil, devbulk.Mark(ErrConflict, "--parent %s: no such device in netns %s", name, o.NS.Name)
		}
		out = append(out, devices.Lower{Index: l.Index, Name: l.Name})
	}
	return out, nil, nil
}

func namesFree(existing []nlbatch.Link, groups ...[]devices.Link) error {
	taken := make(map[string]bool, len(existing))
	for _, l := range existing {
		taken[l.Name] = true
	}
	for _, links := range groups {
		for _, l := range links {
			for _, name := range []string{l.Name, l.Peer} {
				if taken[name] {
					return devbulk.Mark(ErrConflict, "a device named %s already exists: choose another --prefix", name)
				}
			}
		}
	}
	return nil
}

func findName(links []nlbatch.Link, name string) (nlbatch.Link, bool) {
	for _, l := range links {
		if l.Name == name {
			return l, true
		}
	}
	return nlbatch.Link{}, false
}
