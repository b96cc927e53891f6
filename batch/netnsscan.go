package batch

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/devbulk/devbulk/devices"
	"github.com/devbulk/devbulk/nlbatch"
)

// dependent is a device in another named namespace that goes when
// ifindex on in the namespace scanned for goes: one whose lower device
// (IFLA_LINK with IFLA_LINK_NETNSID) is on (a macvlan or vlan made with
// `link X netns B` goes with X), or one that sits on such a device in its
// own namespace. A veth whose peer is on (peer) is made with on in one
// request: the set's own when on is, wherever a move took either end.
type dependent struct {
	name  string // with its namespace, for messages
	on    int32
	index int32 // the device's ifindex in its own namespace
	peer  bool
}

// foreignTo reports whether d is not the set's but goes with one of ours:
// a veth peer of one of mine (away: mine names it back as its own peer,
// in another namespace) is the set's.
func (d dependent) foreignTo(ours map[int32]bool, away map[int32]int32) bool {
	return ours[d.on] && !(d.peer && away[d.on] == d.index)
}

// dependentsAway lists the devices in other named namespaces that sit on a
// device of t's namespace, and what sits on the veths among them there:
// candidates, which refuseDependents keeps where they go with a device that
// is still the set's, or a veth peer of one, unless they are the peer a
// move left behind (dependent.foreignTo). All
// are taken, not only those on recorded ifindexes: a record keeps no veth
// peers, and which devices are the set's is known only at the look after
// this scan. None for a namespace devbulk made for the set, or without a
// namespace to compare with.
func (s *Set) dependentsAway(t Target) ([]dependent, error) {
	dl := t.dialer()
	if t.Dedicated != nil || dl == nil {
		return nil, nil
	}
	paths, err := dl.Elsewhere()
	if err != nil {
		return nil, err
	}
	var out []dependent
	for _, path := range paths {
		found, err := dependentsIn(dl, path)
		if err != nil {
			return nil, fmt.Errorf("netns %s: %w", path, err)
		}
		out = append(out, found...)
	}
	return out, nil
}

// dependentsIn lists the devices of the namespace at path that sit on a
// device of the set's namespace.
func dependentsIn(dl Dialer, path string) ([]dependent, error) {
	c, err := dl.Dial(path, nlbatch.Options{RcvBuf: 1 << 20})
	if errors.Is(err, ErrNamespaceGone) {
		return nil, nil // gone meanwhile, or not a namespace
	}
	if err != nil {
		return nil, err
	}
	defer c.Close()
	links, err := c.ScanLinks()
	if err != nil {
		return nil, err
	}
	var candidates []nlbatch.Link
	for _, l := range links {
		if l.HasParentNetns {
			candidates = append(candidates, l)
		}
	}
	if len(candidates) == 0 {
		return nil, nil
	}
	id, err := c.NetnsID(dl.Self())
	if err != nil {
		return nil, err
	}
	var out []dependent
	named := func(l nlbatch.Link) string { return fmt.Sprintf("%s (netns %s)", l.Name, filepath.Base(path)) }
	for _, l := range candidates {
		if l.ParentNetnsID != id {
			continue
		}
		d := dependent{name: named(l), on: l.Parent, index: l.Index, peer: devices.Paired(l.Kind)}
		out = append(out, d)
		if !d.peer {
			continue
		}
		// What sits on a peer here goes with it, and so with on.
		for _, u := range links {
			if slices.Contains(u.Lowers(), l.Index) {
				out = append(out, dependent{name: named(u), on: l.Parent, index: u.Index})
			}
		}
	}
	return out, nil
}

// awayPeers maps each veth of mine whose peer is in another namespace to
// the peer's ifindex there.
func awayPeers(mine []nlbatch.Link) map[int32]int32 {
	out := map[int32]int32{}
	for _, l := range mine {
		if l.HasParentNetns && l.Parent != 0 && devices.Paired(l.Kind) {
			out[l.Index] = l.Parent
		}
	}
	return out
}
