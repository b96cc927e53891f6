package batch

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/devbulk/devbulk/nlbatch"
)

// dependent is a device in another named namespace whose lower device
// (IFLA_LINK with IFLA_LINK_NETNSID) is ifindex on in the namespace
// scanned for: a macvlan or vlan made with `link X netns B` goes with X.
type dependent struct {
	name string // with its namespace, for messages
	on   int32
}

// dependentsAway lists the devices in other named namespaces that sit on a
// device of t's namespace: candidates, which refuseDependents keeps where
// they sit on a device that is still the set's, or a veth peer of one. All
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
	for _, l := range candidates {
		if l.ParentNetnsID == id {
			out = append(out, dependent{name: fmt.Sprintf("%s (netns %s)", l.Name, filepath.Base(path)), on: l.Parent})
		}
	}
	return out, nil
}
