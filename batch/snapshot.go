package batch

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"golang.org/x/sys/unix"

	"github.com/devbulk/devbulk/nlbatch"
)

// snapshot is one consistent dump of a namespace's links: the kernel did not
// flag it interrupted, so every link in it existed as listed while it was
// read, and a recorded ifindex absent from it was absent then. It answers,
// for all of a set's devices at once, what a lookup per device would; a
// delete of N devices costs one dump before and one after instead of 2N
// lookups. A nil *snapshot (the dump was interrupted on every attempt, in a
// busy namespace) means: look each device up.
type snapshot struct {
	links []nlbatch.Link // sorted by ifindex
}

// takeSnapshot dumps c's namespace, with room for about hint links and a
// few more (lo, and what else the namespace holds: a slice sized to the
// set alone grew by a quarter, and was copied, for lo); nil, nil when no
// attempt was consistent.
func takeSnapshot(c *nlbatch.Conn, hint int) (*snapshot, error) {
	links, err := c.LinksSized(hint + hint/16 + 16)
	if errors.Is(err, nlbatch.ErrDumpInconsistent) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing links: %w", err)
	}
	slices.SortFunc(links, func(a, b nlbatch.Link) int { return cmp.Compare(a.Index, b.Index) })
	return &snapshot{links: links}, nil
}

// errAbsent is find's answer for an ifindex the dump does not hold, as a
// lookup of an absent device answers (one value: after a delete of 200 000
// each is absent).
var errAbsent = fmt.Errorf("not in the namespace: %w", unix.ENODEV)

// find is the link at ifindex, or errAbsent.
func (sn *snapshot) find(index int32) (nlbatch.Link, error) {
	i, ok := slices.BinarySearchFunc(sn.links, index, func(l nlbatch.Link, x int32) int { return cmp.Compare(l.Index, x) })
	if !ok {
		return nlbatch.Link{}, errAbsent
	}
	return sn.links[i], nil
}

// scan is every link of the namespace for the safety scans: the snapshot's,
// or, without one, ScanLinks' union of the interrupted attempts.
func scan(c *nlbatch.Conn, sn *snapshot) ([]nlbatch.Link, error) {
	if sn != nil {
		return sn.links, nil
	}
	all, err := c.ScanLinks()
	if err != nil {
		return nil, fmt.Errorf("listing links: %w", err)
	}
	return all, nil
}
