package batch

import (
	"context"
	"errors"
	"fmt"

	"github.com/devbulk/devbulk"
	"github.com/devbulk/devbulk/devices"
	"github.com/devbulk/devbulk/nlbatch"
)

// MoveGroup sends one RTM_NEWLINK for the run's group (ifindex 0,
// IFLA_GROUP), which the kernel applies to each device of the group in
// turn (rtnl_group_changelink).
const MoveGroup MoveStrategy = "group"

func init() {
	registerMove(MoveGroup, &moveStrategy{
		order:     3,
		markFirst: true,
		applies: func(_ *devices.Kind, lowers bool) error {
			if lowers {
				return devbulk.Mark(ErrNotApplicable, "the lower devices devbulk made share the run's group: a move by group would take them too")
			}
			return nil
		},
		run: moveGroup,
	})
}

// moveGroup moves the set's group in one request, once the look right
// before it found the group holding the set's devices and nothing else.
func moveGroup(ctx context.Context, d *job, links []nlbatch.Link, to Destination) (map[int32]bool, error) {
	if len(links) == 0 {
		return nil, nil
	}
	if !d.exact {
		return nil, fmt.Errorf("group %d holds devices that are not the run's: refusing to move by group", d.s.Group)
	}
	if err := d.first(); err != nil {
		return nil, err
	}
	// The kernel moves the group's devices one by one and stops at the
	// first it cannot move: those before it are gone, and the settle finds
	// them.
	if err := d.t.Conn.Do(ctx, nlbatch.SetGroupNetnsRequest(d.s.Group, int(to.NS.Handle))); err != nil && !errors.Is(err, nlbatch.ErrAckLost) {
		return indexes(links), fmt.Errorf("move group %d: %w", d.s.Group, err)
	}
	return indexes(links), nil
}
