package batch

import (
	"context"
	"errors"
	"fmt"

	"github.com/devbulk/devbulk/nlbatch"
)

// DeleteGroup deletes the run by its group, in one request.
const DeleteGroup DeleteStrategy = "group"

// group deletes the set in one RTM_DELLINK by group: the kernel's batch.
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
func deleteGroup(ctx context.Context, d *deletion) (map[int32]bool, error) {
	s, c, mine := d.s, d.t.Conn, d.mine
	if len(mine) == 0 {
		return nil, nil
	}
	if err := d.first(); err != nil {
		return nil, err
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

// markFresh moves mine into a group no device is in, saved in the record
// first, and checks that it holds them and nothing else. It returns the
// group and the devices marked.
func (d *deletion) markFresh(ctx context.Context, mine []nlbatch.Link) (uint32, []nlbatch.Link, error) {
	s, c := d.s, d.t.Conn
	group := freshGroup(d.used, nil)
	s.Marks = append(s.Marks, group)
	if err := ledgerOr(d.o.Ledger).Marked(s); err != nil {
		return 0, nil, fmt.Errorf("saving the new group before marking: %w", err)
	}
	// Look the devices up again right before marking them.
	mine, _, err := s.check(ctx, lookup{c: c, owns: d.ownership()}, mine)
	if err != nil {
		return 0, nil, err
	}
	reqs := make([][]byte, len(mine))
	for i, l := range mine {
		reqs[i] = nlbatch.SetGroupRequest(l.Index, group)
	}
	res, st, err := c.Execute(ctx, reqs, 0)
	d.p.noteStats(st)
	if err != nil {
		return 0, nil, err
	}
	for i, r := range res {
		if r.Err != nil {
			return 0, nil, fmt.Errorf("marking %s with group %d: %w", mine[i].Name, group, r.Err)
		}
	}
	now, err := c.ScanLinks()
	if err != nil {
		return 0, nil, err
	}
	if !s.holdsExactly(now, group, mine, d.ownership()) {
		return 0, nil, fmt.Errorf("group %d holds %d devices after marking %d: refusing to delete by group", group, members(now, group), len(mine))
	}
	return group, mine, nil
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
