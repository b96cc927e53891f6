package batch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/devbulk/devbulk/devices"
	"github.com/devbulk/devbulk/nlbatch"
)

// ErrConflict reports a request that clashes with what the namespace
// already holds (a name in use, a missing parent). Nothing was created.
var ErrConflict = errors.New("conflict")

// CreateOptions describe a create for scripted use in an existing namespace.
type CreateOptions struct {
	Kind     *devices.Kind
	Devices  devices.Options // Group and Lowers are filled in
	Strategy CreateStrategy
	// Parents are existing lower devices, by name, for vlan and macvlan;
	// when empty devbulk creates its own, of kind Lower.
	Parents []string
	Lower   *devices.Kind
	// Netns and Inode identify the namespace in the record.
	Netns string
	Inode uint64
}

// CreateIn creates a run's devices through c and records their ownership
// before and after. On failure or cancellation it deletes what it created
// (by group) and removes the record, so nothing is left behind.
func CreateIn(ctx context.Context, c *nlbatch.Conn, o CreateOptions) (Phase, *Record, error) {
	p := Phase{Phase: "create", Tool: "devbulk", Strategy: string(o.Strategy), Devices: o.Devices.Count}
	existing, err := c.Links()
	if err != nil {
		return p, nil, err
	}
	recs, err := LoadRecords()
	if err != nil {
		return p, nil, err
	}
	o.Devices.Group = FreshGroup(existing, func(g uint32) bool { return GroupRecorded(recs, g) })

	var lowers []devices.Link
	if o.Kind.NeedsLower {
		if o.Devices.Lowers, lowers, err = chooseLowers(o, existing); err != nil {
			return p, nil, err
		}
	}
	links, err := o.Kind.Plan(o.Devices)
	if err != nil {
		return p, nil, err
	}
	if err := namesFree(existing, links, lowers); err != nil {
		return p, nil, err
	}

	rec := &Record{Group: o.Devices.Group, Prefix: o.Devices.Prefix, Kind: o.Kind.Name,
		Netns: o.Netns, Inode: o.Inode, PID: os.Getpid()}
	if err := rec.Save(); err != nil {
		return p, nil, fmt.Errorf("saving the run record: %w", err)
	}
	set, _ := rec.Set()
	undo := func(cause error) (Phase, *Record, error) {
		if err := set.Record(c, linkNames(links), linkNames(lowers)); err == nil {
			_, derr := Delete(context.Background(), Target{Conn: c}, set, DeleteGroup, DeleteOptions{})
			if derr != nil {
				return p, rec, fmt.Errorf("%w; undoing it failed too (devbulk cleanup retries): %v", cause, derr)
			}
		}
		_ = rec.Remove()
		return p, nil, cause
	}

	if len(lowers) > 0 {
		if _, ok, err := Create(ctx, c, lowers, CreatePipelined); err != nil || !all(ok) || ctx.Err() != nil {
			return undo(errors.Join(fmt.Errorf("creating lower devices"), err, ctx.Err()))
		}
		if err := set.Record(c, nil, linkNames(lowers)); err != nil {
			return undo(err)
		}
		for i, l := range set.Lowers {
			o.Devices.Lowers[i].Index = l.Index
		}
		if links, err = o.Kind.Plan(o.Devices); err != nil {
			return undo(err)
		}
	}
	p, ok, err := Create(ctx, c, links, o.Strategy)
	switch {
	case err != nil:
		return undo(err)
	case ctx.Err() != nil:
		return undo(ctx.Err())
	case !all(ok):
		return undo(fmt.Errorf("%d of %d links not created, first errors: %s", p.Failed, len(links), strings.Join(p.Errors, "; ")))
	}
	if err := set.Record(c, linkNames(links), linkNames(lowers)); err != nil {
		return undo(err)
	}
	rec.Links, rec.Lowers = set.Links, set.Lowers
	if err := rec.Save(); err != nil {
		return undo(err)
	}
	return p, rec, nil
}

// chooseLowers resolves the parents given by name, or plans devbulk's own
// lower devices (their indexes are filled in once they exist).
func chooseLowers(o CreateOptions, existing []nlbatch.Link) ([]devices.Lower, []devices.Link, error) {
	need := o.Kind.LowersNeeded(o.Devices.Count)
	if len(o.Parents) == 0 {
		if o.Lower == nil {
			return nil, nil, fmt.Errorf("%w: %s needs a lower device kind (dummy or ifb)", ErrUnsupported, o.Kind.Name)
		}
		lowers, err := o.Lower.Plan(devices.Options{Count: need, Prefix: o.Devices.Prefix + "l",
			Group: o.Devices.Group, Up: o.Devices.Up})
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
		return nil, nil, fmt.Errorf("%w: %d %s links need %d parents (%d per parent), got %d",
			ErrConflict, o.Devices.Count, o.Kind.Name, need, o.Kind.PerLower, len(o.Parents))
	}
	var out []devices.Lower
	for _, name := range o.Parents {
		l, ok := findName(existing, name)
		if !ok {
			return nil, nil, fmt.Errorf("%w: parent %s does not exist in netns %s", ErrConflict, name, o.Netns)
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
					return fmt.Errorf("%w: a device named %s already exists: choose another --prefix", ErrConflict, name)
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

func linkNames(links []devices.Link) []string {
	out := make([]string, len(links))
	for i := range links {
		out[i] = links[i].Name
	}
	return out
}
