package batch

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"github.com/devbulk/devbulk/nlbatch"
)

// DeleteGroup deletes the run by its group, in one request.
const DeleteGroup DeleteStrategy = "group"

// GroupOptions are the group strategy's own.
type GroupOptions struct {
	// Window, when over 0 and under the set's size, cuts the delete into
	// windows of that many devices: each marked with a group of its own
	// (one fresh group, reused), checked, and deleted by it, RTNL released
	// between windows. It bounds how long others wait for the lock, at the
	// cost of a batch's RCU waits per window.
	Window int
}

// Strategy names the strategy that takes them.
func (GroupOptions) Strategy() string { return string(DeleteGroup) }

// Label names a windowed group delete in results ("group-w100"), the
// whole one "group".
func (g GroupOptions) Label() string {
	if g.Window > 0 {
		return fmt.Sprintf("%s-w%d", DeleteGroup, g.Window)
	}
	return string(DeleteGroup)
}

// group deletes the set in one RTM_DELLINK by group: the kernel's batch
// (or, with GroupOptions.Window, one batch per window).
func init() {
	register(DeleteGroup, &strategy{
		order:    4,
		oneBatch: true,
		tearDown: markedFirst(deleteGroup),
		ip: func(s *Set) IPCommand {
			return IPCommand{Label: "ip link del group", Args: []string{"link", "del", "group", fmt.Sprint(s.Group)}}
		},
	})
}

// deleteGroup deletes d.mine by group, as the last look before it saw
// them (d.exact, d.used). When the run's group does not hold exactly the
// set's devices (someone moved a device into it, or an earlier
// group delete was interrupted half-way through marking), it marks the set
// with a fresh group first (pipelined RTM_SETLINK), saved beforehand, and
// checks the mark before sweeping.
func deleteGroup(ctx context.Context, d *job) (map[int32]bool, error) {
	s, c, mine := d.s, d.t.Conn, d.mine
	if len(mine) == 0 {
		return nil, nil
	}
	if err := d.first(); err != nil {
		return nil, err
	}
	if g, ok := d.o.Own.(GroupOptions); ok && g.Window > 0 && g.Window < len(mine) {
		return d.groupWindows(ctx, mine, g.Window)
	}
	group := s.Group
	if !d.exact {
		var err error
		if group, mine, err = d.markFresh(ctx, mine); err != nil {
			return nil, err
		}
	}
	// A lost ACK: the kernel executed the request; settle decides.
	if err := c.Do(ctx, nlbatch.DelGroupRequest(group)); err != nil && !errors.Is(err, nlbatch.ErrAckLost) {
		return nil, fmt.Errorf("delete group %d: %w", group, err)
	}
	return indexes(mine), nil
}

// groupWindows deletes mine window devices at a time, each window marked
// with one fresh group (saved first), checked to hold just them, and
// deleted by it; the group is empty again before the next window.
func (d *job) groupWindows(ctx context.Context, mine []nlbatch.Link, window int) (map[int32]bool, error) {
	group, err := d.freshMark()
	if err != nil {
		return nil, err
	}
	confirmed := map[int32]bool{}
	progress := progressFrom(d.o.Progress, 0, len(mine))
	windows := (len(mine) + window - 1) / window
	for from := 0; from < len(mine) && ctx.Err() == nil; from += window {
		at := func(err error) error {
			return fmt.Errorf("window %d of %d (%d devices deleted before it): %w", from/window+1, windows, len(confirmed), err)
		}
		marked, err := d.markAs(ctx, group, mine[from:min(from+window, len(mine))])
		if err != nil {
			return confirmed, at(err)
		}
		if err := d.t.Conn.Do(ctx, nlbatch.DelGroupRequest(group)); err != nil && !errors.Is(err, nlbatch.ErrAckLost) {
			return confirmed, at(fmt.Errorf("delete group %d: %w", group, err))
		}
		maps.Copy(confirmed, indexes(marked))
		if progress != nil {
			progress(min(from+window, len(mine)))
		}
	}
	return confirmed, nil
}

// markFresh moves mine into a group no device is in, saved in the record
// first, and checks that it holds them and nothing else. It returns the
// group and the devices marked.
func (d *job) markFresh(ctx context.Context, mine []nlbatch.Link) (uint32, []nlbatch.Link, error) {
	group, err := d.freshMark()
	if err != nil {
		return 0, nil, err
	}
	mine, err = d.markAs(ctx, group, mine)
	return group, mine, err
}

// freshMark picks a group no device is in and saves it in the record
// (Set.Marks) before any device is put in it.
func (d *job) freshMark() (uint32, error) {
	s := d.s
	group := freshGroup(d.used, nil)
	s.Marks = append(s.Marks, group)
	if err := ledgerOr(d.o.Ledger).Marked(s); err != nil {
		return 0, fmt.Errorf("saving the new group before marking: %w", err)
	}
	return group, nil
}

// markAs moves mine into group and checks that it holds them and nothing
// else. It returns the devices marked.
func (d *job) markAs(ctx context.Context, group uint32, mine []nlbatch.Link) ([]nlbatch.Link, error) {
	s, c := d.s, d.t.Conn
	// Look the devices up again right before marking them.
	mine, _, err := s.check(ctx, lookup{c: c, owns: d.ownership()}, mine)
	if err != nil {
		return nil, err
	}
	reqs := make([][]byte, len(mine))
	for i, l := range mine {
		reqs[i] = nlbatch.SetGroupRequest(l.Index, group)
	}
	res, st, err := c.Execute(ctx, reqs, 0)
	d.p.noteStats(st)
	if err != nil {
		return nil, err
	}
	for i, r := range res {
		if r.Err != nil {
			return nil, fmt.Errorf("marking %s with group %d: %w", mine[i].Name, group, r.Err)
		}
	}
	now, err := c.ScanLinks()
	if err != nil {
		return nil, err
	}
	if !s.holdsExactly(now, group, mine, d.ownership()) {
		return nil, fmt.Errorf("group %d holds %d devices after marking %d: refusing to delete by group", group, members(now, group), len(mine))
	}
	// Devices of others put on these since the first look (a windowed
	// delete releases the lock between windows) would go with them.
	if foreign := dependentsOf(now, s.ours(mine, now), d.ownership()); len(foreign) > 0 {
		return nil, fmt.Errorf("refusing to delete by group: %w: %s", ErrForeignDependents, nameList(foreign))
	}
	return mine, nil
}

// holdsExactly reports whether group holds devs and nothing else in links:
// each member is one of devs and still the set's by owns (ifindex, name,
// group). A link a scan lists twice (as it was and as it became) counts
// once.
func (s *Set) holdsExactly(links []nlbatch.Link, group uint32, devs []nlbatch.Link, owns func(nlbatch.Link) bool) bool {
	unseen := indexes(devs) // false once seen
	seen := 0
	for _, l := range links {
		if l.Group == group {
			first, ok := unseen[l.Index]
			if !ok || !owns(l) {
				return false
			}
			if first {
				unseen[l.Index] = false
				seen++
			}
		}
	}
	return seen == len(devs)
}

func members(links []nlbatch.Link, group uint32) int {
	n := 0
	for _, l := range links {
		if l.Group == group {
			n++
		}
	}
	return n
}
