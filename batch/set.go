package batch

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/devbulk/devbulk/devices"
	"github.com/devbulk/devbulk/nlbatch"
)

// Set is what one run created in one namespace, and so what it may delete.
type Set struct {
	Kind *devices.Kind
	// LowerKind is the kind of the lower devices devbulk created, if any.
	LowerKind *devices.Kind
	// Group is the group the run's devices got at creation; Marks are the
	// groups a group delete moved them to since (see deleteGroup).
	Group  uint32
	Marks  []uint32
	Prefix string
	// Links are the run's links and Lowers the lower devices devbulk created
	// for them, as recorded after creation (ifindex and name). Delete leaves
	// in them the devices it could not delete (see Phase.Left).
	Links  []nlbatch.Link
	Lowers []nlbatch.Link
}

// owner returns the test of ownership over the devices recorded now: a link
// is the set's when its recorded ifindex and name, one of the run's groups
// and its prefix all match.
func (s *Set) owner() func(nlbatch.Link) bool {
	names := make(map[int32]string, len(s.Links)+len(s.Lowers))
	for _, r := range s.all() {
		names[r.Index] = r.Name
	}
	return func(l nlbatch.Link) bool {
		name, ok := names[l.Index]
		return ok && name == l.Name && s.hasGroup(l.Group) && strings.HasPrefix(l.Name, s.Prefix)
	}
}

func (s *Set) hasGroup(g uint32) bool { return g == s.Group || slices.Contains(s.Marks, g) }

// foreignDependents lists the devices of all that are not the set's but
// depend on one of mine (the set's devices as found now): uppers
// (IFLA_LINK: vlan, macvlan, ipvlan), vxlans on it (IFLA_VXLAN_LINK), and
// devices enslaved to it (IFLA_MASTER). Deleting the set's device would
// delete or change them. A veth's peer, made in the same request, is the
// set's too, and so are the devices on it.
func (s *Set) foreignDependents(mine, all []nlbatch.Link) []string {
	return dependentsOf(all, s.ours(mine, all), s.owner())
}

// dependentsOf lists the devices of all that are neither among ours (the
// set's devices as found now and their veth peers) nor the set's by owns,
// but depend on one of ours (see foreignDependents).
func dependentsOf(all []nlbatch.Link, ours map[int32]bool, owns func(nlbatch.Link) bool) []string {
	var out []string
	for _, l := range all {
		if ours[l.Index] || owns(l) {
			continue
		}
		for _, lower := range l.Lowers() {
			if ours[lower] {
				out = append(out, l.Name)
				break
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// peers returns the veth peers of mine found in all: each names its veth
// as IFLA_LINK while the veth names it.
// ours is the ifindexes of mine and of their veth peers among all: what a
// delete of mine takes, and may take.
func (s *Set) ours(mine, all []nlbatch.Link) map[int32]bool {
	out := indexes(mine)
	for _, p := range s.peers(mine, all) {
		out[p.Index] = true
	}
	return out
}

func (s *Set) peers(mine, all []nlbatch.Link) []nlbatch.Link {
	if s.Kind == nil || !s.Kind.Peers {
		return nil
	}
	want := peerIndexes(mine)
	var out []nlbatch.Link
	for _, l := range all {
		if veth, ok := want[l.Index]; ok && l.Parent == veth {
			out = append(out, l)
		}
	}
	return out
}

// peerIndexes maps the ifindex of each veth's peer in this namespace to
// the veth's.
func peerIndexes(veths []nlbatch.Link) map[int32]int32 {
	want := map[int32]int32{}
	for _, l := range veths {
		if l.Parent != 0 && !l.HasParentNetns {
			want[l.Parent] = l.Index
		}
	}
	return want
}

// all is every recorded device, upper links first, so one-by-one deletes
// never cascade. Without lower devices it is s.Links itself (200 000 links
// are 17 MB): callers only read it.
func (s *Set) all() []nlbatch.Link {
	if len(s.Lowers) == 0 {
		return s.Links[:len(s.Links):len(s.Links)] // an append copies
	}
	return append(append([]nlbatch.Link(nil), s.Links...), s.Lowers...)
}

// split separates devices into the set's upper links and its lower devices.
func (s *Set) split(devs []nlbatch.Link) (uppers, lowers []nlbatch.Link) {
	isLower := indexes(s.Lowers)
	for _, l := range devs {
		if isLower[l.Index] {
			lowers = append(lowers, l)
		} else {
			uppers = append(uppers, l)
		}
	}
	return uppers, lowers
}

// Present looks the set's links up and returns those that are still the
// set's (a bench checks that a delete by another tool left none).
func (s *Set) Present(ctx context.Context, c *nlbatch.Conn) ([]nlbatch.Link, error) {
	sn, err := takeSnapshot(c, len(s.Links))
	if err != nil {
		return nil, err
	}
	mine, _, err := s.check(ctx, lookup{c, sn, s.owner()}, s.Links)
	return mine, err
}

// lookup is where check and each find devices as they are now: in
// snapshot sn or, when sn is nil, by a lookup each through c (atomic, never
// interrupted by concurrent changes); owns is the set's ownership test
// (s.owner(), made once per delete: it indexes every device of the set).
type lookup struct {
	c    *nlbatch.Conn
	sn   *snapshot
	owns func(nlbatch.Link) bool
}

// check finds each of devs by ifindex and returns those the set still owns,
// as they are now, and what became of the others.
func (s *Set) check(ctx context.Context, lk lookup, devs []nlbatch.Link) (mine []nlbatch.Link, gone []Leftover, err error) {
	mine = make([]nlbatch.Link, 0, len(devs))
	err = s.each(ctx, lk, devs, func(now nlbatch.Link, left Leftover, owned bool) {
		if owned {
			mine = append(mine, now)
		} else {
			gone = append(gone, left)
		}
	})
	return mine, gone, err
}

// each finds devs as check does and calls f with each device as it is now,
// and, when it is no longer the set's (owned false), what became of it.
// (By value: a pointer would be one allocation per device.)
func (s *Set) each(ctx context.Context, lk lookup, devs []nlbatch.Link, f func(now nlbatch.Link, left Leftover, owned bool)) error {
	judge := func(i int, now nlbatch.Link, err error) {
		if err == nil && lk.owns(now) {
			f(now, Leftover{}, true)
			return
		}
		left := s.leftover(devs[i], now, err)
		f(now, left, false)
	}
	if lk.sn != nil {
		for i, d := range devs {
			now, err := lk.sn.find(d.Index)
			judge(i, now, err)
		}
		return nil
	}
	idx := make([]int32, len(devs))
	for i, l := range devs {
		idx[i] = l.Index
	}
	if err := lk.c.EachLinkByIndex(ctx, idx, judge); err != nil {
		return fmt.Errorf("looking devices up: %w", err)
	}
	return nil
}

// nameList joins names for a message, at most ten of them.
func nameList(names []string) string {
	const most = 10
	if len(names) <= most {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:most], ", "), len(names)-most)
}

// Leftover is a recorded device that is no longer the set's as recorded,
// or that a delete did not remove.
type Leftover struct {
	Link nlbatch.Link `json:"link"` // as recorded
	// Present says that the device is still there (renamed, moved to another
	// group, or not deleted): it stays in the set.
	Present bool   `json:"present"`
	Why     string `json:"why"`
	// RenamedTo is the name someone else gave the device (still in the
	// run's group): only the user can say whether it is still devbulk's.
	RenamedTo string `json:"renamed_to,omitempty"`
}

func (l Leftover) String() string {
	return fmt.Sprintf("%s (ifindex %d): %s", l.Link.Name, l.Link.Index, l.Why)
}

// goneWhy is why a recorded device that the kernel no longer has was not
// deleted by this delete.
const goneWhy = "gone before devbulk deleted it (deleted, or moved to another namespace, by someone else)"

// Gone reports whether the device was already gone when this delete came
// to it.
func (l Leftover) Gone() bool { return l.Why == goneWhy }

// Summarize says what became of left in a few lines: each device, or,
// where more than three share a reason (an interrupted delete), their
// count, first and last.
func Summarize(left []Leftover) []string {
	byWhy := map[string][]Leftover{}
	var order []string
	for _, l := range left {
		if byWhy[l.Why] == nil {
			order = append(order, l.Why)
		}
		byWhy[l.Why] = append(byWhy[l.Why], l)
	}
	var out []string
	for _, why := range order {
		if ls := byWhy[why]; len(ls) > 3 {
			out = append(out, fmt.Sprintf("%d devices (%s .. %s): %s", len(ls), ls[0].Link.Name, ls[len(ls)-1].Link.Name, why))
			continue
		}
		for _, l := range byWhy[why] {
			out = append(out, l.String())
		}
	}
	return out
}

// leftover says what became of recorded device rec, found as now (or not,
// with lookup error err). A device whose ifindex holds neither the recorded
// name nor one of the run's groups is not the run's any more.
func (s *Set) leftover(rec, now nlbatch.Link, err error) Leftover {
	switch {
	case errors.Is(err, unix.ENODEV):
		return Leftover{Link: rec, Why: goneWhy}
	case err != nil:
		return Leftover{Link: rec, Present: true, Why: fmt.Sprintf("could not be looked up: %v", err)}
	case now.Name != rec.Name && s.hasGroup(now.Group):
		return Leftover{Link: rec, Present: true, RenamedTo: now.Name, Why: fmt.Sprintf("renamed to %s by someone else, not deleted", now.Name)}
	case now.Name == rec.Name && !s.hasGroup(now.Group):
		// Group is part of ownership: moved out of the run's groups, or
		// replaced by a device of the same name at the same ifindex.
		return Leftover{Link: rec, Why: fmt.Sprintf("no longer devbulk's: its ifindex holds %s in group %d (moved out of the run's group, or replaced, by someone else), not deleted", now.Name, now.Group)}
	case now.Name == rec.Name:
		return Leftover{Link: rec, Present: true, Why: "not deleted"}
	}
	return Leftover{Link: rec, Why: fmt.Sprintf("gone: its ifindex now holds %s, which is not devbulk's", now.Name)}
}

// LookUp fills the set's links after a creation done by others (iproute2):
// the devices named in names that carry the set's group, found by one
// lookup each (a dump would be interrupted by every concurrent change in a
// busy namespace).
func (s *Set) LookUp(c *nlbatch.Conn, names []string) error {
	now, errs, err := lookUpNames(c, names)
	if err != nil {
		return err
	}
	s.Links = nil
	for i, l := range now {
		if errs[i] == nil && l.Group == s.Group {
			s.Links = append(s.Links, l)
		}
	}
	return nil
}

// Adopt fills the set from the namespace when no ifindexes were recorded
// (devbulk was killed while creating): links are the devices with one of the
// set's groups named PREFIX<n>, lowers those named PREFIXl<n>. Without
// recorded ifindexes, that group and those names are the ownership.
func (s *Set) Adopt(c *nlbatch.Conn) error {
	all, err := c.ScanLinks()
	if err != nil {
		return fmt.Errorf("listing links: %w", err)
	}
	s.Links, s.Lowers = nil, nil
	seen := map[int32]bool{}
	for _, l := range all {
		if !s.hasGroup(l.Group) || seen[l.Index] {
			continue
		}
		seen[l.Index] = true
		rest, ok := strings.CutPrefix(l.Name, s.Prefix)
		switch {
		case ok && isDigits(rest):
			s.Links = append(s.Links, l)
		case ok && strings.HasPrefix(rest, "l") && isDigits(rest[1:]):
			s.Lowers = append(s.Lowers, l)
		}
	}
	return nil
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// FreshGroup picks a random group id that no link in links uses and that
// taken does not reject. Ids stay clear of the small numbers people assign
// by hand.
func FreshGroup(links []nlbatch.Link, taken func(uint32) bool) uint32 {
	return freshGroup(groups(links), taken)
}

// groups is the groups links are in.
func groups(links []nlbatch.Link) map[uint32]bool {
	used := map[uint32]bool{}
	for _, l := range links {
		used[l.Group] = true
	}
	return used
}

// freshGroup is a group not in used and not taken.
func freshGroup(used map[uint32]bool, taken func(uint32) bool) uint32 {
	for {
		g := 0x10000000 + rand.Uint32N(0x6fffffff)
		if !used[g] && (taken == nil || !taken(g)) {
			return g
		}
	}
}
