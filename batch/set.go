package batch

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

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
	// for them, as recorded after creation (ifindex and name).
	Links  []nlbatch.Link
	Lowers []nlbatch.Link
	// Persist, when set, saves the set's ownership (a record); Delete calls
	// it before it moves devices to a new group, so that an interruption
	// never leaves devices under a group nobody knows.
	Persist func() error
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

// foreignUppers lists the devices stacked on the set's lower devices that are
// not the set's: deleting a lower device deletes its vlans and macvlans too.
func (s *Set) foreignUppers(all []nlbatch.Link) []string {
	lowers := map[int32]bool{}
	for _, l := range s.Lowers {
		lowers[l.Index] = true
	}
	owns := s.owner()
	var out []string
	for _, l := range all {
		if l.Parent != 0 && lowers[l.Parent] && !owns(l) {
			out = append(out, l.Name)
		}
	}
	return out
}

// all is every recorded device, upper links first, so one-by-one deletes
// never cascade.
func (s *Set) all() []nlbatch.Link {
	return append(append([]nlbatch.Link(nil), s.Links...), s.Lowers...)
}

// split separates devices into the set's upper links and its lower devices.
func (s *Set) split(devs []nlbatch.Link) (uppers, lowers []nlbatch.Link) {
	isLower := make(map[int32]bool, len(s.Lowers))
	for _, l := range s.Lowers {
		isLower[l.Index] = true
	}
	for _, l := range devs {
		if isLower[l.Index] {
			lowers = append(lowers, l)
		} else {
			uppers = append(uppers, l)
		}
	}
	return uppers, lowers
}

// present returns the set's devices still in the namespace, upper links
// first, and every link of the namespace.
func (s *Set) present(c *nlbatch.Conn) (mine, all []nlbatch.Link, err error) {
	all, err = c.Links()
	if err != nil {
		return nil, nil, fmt.Errorf("listing links: %w", err)
	}
	byIndex := make(map[int32]nlbatch.Link, len(all))
	for _, l := range all {
		byIndex[l.Index] = l
	}
	owns := s.owner()
	for _, r := range s.all() {
		if l, ok := byIndex[r.Index]; ok && owns(l) {
			mine = append(mine, l)
		}
	}
	return mine, all, nil
}

// Record fills the set from the namespace after creation: links and lowers
// are the devices named in names and lowerNames that carry the set's group.
func (s *Set) Record(c *nlbatch.Conn, names, lowerNames []string) error {
	all, err := c.Links()
	if err != nil {
		return fmt.Errorf("listing links: %w", err)
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	lower := map[string]bool{}
	for _, n := range lowerNames {
		lower[n] = true
	}
	s.Links, s.Lowers = nil, nil
	for _, l := range all {
		if l.Group != s.Group {
			continue
		}
		switch {
		case want[l.Name]:
			s.Links = append(s.Links, l)
		case lower[l.Name]:
			s.Lowers = append(s.Lowers, l)
		}
	}
	return nil
}

// Adopt fills the set from the namespace when no ifindexes were recorded
// (devbulk was killed while creating): links are the devices with one of the
// set's groups named PREFIX<n>, lowers those named PREFIXl<n>. Without
// recorded ifindexes, that group and those names are the ownership.
func (s *Set) Adopt(c *nlbatch.Conn) error {
	all, err := c.Links()
	if err != nil {
		return fmt.Errorf("listing links: %w", err)
	}
	s.Links, s.Lowers = nil, nil
	for _, l := range all {
		if !s.hasGroup(l.Group) {
			continue
		}
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
	used := map[uint32]bool{}
	for _, l := range links {
		used[l.Group] = true
	}
	for {
		g := 0x10000000 + rand.Uint32N(0x6fffffff)
		if !used[g] && (taken == nil || !taken(g)) {
			return g
		}
	}
}
