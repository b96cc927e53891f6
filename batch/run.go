package batch

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/devbulk/devbulk/devices"
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
	if len(lowers) > 0 {
		set.LowerKind = o.Lower
	}
	// undo deletes what was created and removes the record; the record
	// stays (for devbulk cleanup) whenever that cannot be done.
	undo := func(cause error) (Phase, *Record, error) {
		if err := set.Record(c, linkNames(links), linkNames(lowers)); err != nil {
			return p, rec, fmt.Errorf("%w; undoing it failed too (devbulk cleanup retries): %v", cause, err)
		}
		if _, err := Delete(context.Background(), Target{Conn: c}, set, DeleteGroup, DeleteOptions{}); err != nil {
			return p, rec, fmt.Errorf("%w; undoing it failed too (devbulk cleanup retries): %v", cause, err)
		}
		_ = rec.Remove()
		return p, nil, cause
	}

	if len(lowers) > 0 {
		if o.Devices.Lowers, err = createLowers(ctx, c, lowers); err != nil {
			return undo(err)
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
	rec.Links, rec.Lowers, rec.Complete = set.Links, set.Lowers, true
	if err := rec.Save(); err != nil {
		return undo(err)
	}
	return p, rec, nil
}

// planLowers plans the lower devices that count links of kind k need,
// named PREFIXl0.., of kind lower.
func planLowers(k, lower *devices.Kind, count int, prefix string, group uint32, up bool) ([]devices.Link, error) {
	if lower == nil {
		return nil, fmt.Errorf("%w: %s needs a lower device kind (dummy or ifb)", ErrUnsupported, k.Name)
	}
	return lower.Plan(devices.Options{Count: k.LowersNeeded(count), Prefix: prefix + "l", Group: group, Up: up})
}

// createLowers creates planned lower devices and returns them, in order,
// with their ifindexes.
func createLowers(ctx context.Context, c *nlbatch.Conn, lowers []devices.Link) ([]devices.Lower, error) {
	p, ok, err := Create(ctx, c, lowers, CreatePipelined)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !all(ok) {
		return nil, fmt.Errorf("creating lower devices: %s", strings.Join(p.Errors, "; "))
	}
	now, err := c.Links()
	if err != nil {
		return nil, err
	}
	index := make(map[string]int32, len(now))
	for _, l := range now {
		index[l.Name] = l.Index
	}
	out := make([]devices.Lower, len(lowers))
	for i, l := range lowers {
		if index[l.Name] == 0 {
			return nil, fmt.Errorf("lower device %s vanished after creation", l.Name)
		}
		out[i] = devices.Lower{Index: index[l.Name], Name: l.Name}
	}
	return out, nil
}

// chooseLowers resolves the parents given by name, or plans devbulk's own
// lower devices (their indexes are filled in once they exist).
func chooseLowers(o CreateOptions, existing []nlbatch.Link) ([]devices.Lower, []devices.Link, error) {
	need := o.Kind.LowersNeeded(o.Devices.Count)
	if len(o.Parents) == 0 {
		lowers, err := planLowers(o.Kind, o.Lower, o.Devices.Count, o.Devices.Prefix, o.Devices.Group, o.Devices.Up)
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
	for i, name := range o.Parents {
		if slices.Contains(o.Parents[:i], name) {
			return nil, nil, fmt.Errorf("%w: parent %s given twice", ErrConflict, name)
		}
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
