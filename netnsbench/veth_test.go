package netnsbench

import (
	"os"
	"strings"
	"testing"

	"github.com/vishvananda/netns"

	"github.com/devbulk/devbulk/namespace"
	"github.com/devbulk/devbulk/nlbatch"
)

// linkIndexes maps the names of the links of ns to their ifindexes.
func linkIndexes(t *testing.T, ns netns.NsHandle) map[string]int32 {
	t.Helper()
	names := map[string]int32{}
	err := namespace.Run(ns, func() error {
		c, err := nlbatch.DialHere(nlbatch.Options{})
		if err != nil {
			return err
		}
		defer c.Close()
		links, err := c.Links()
		for _, l := range links {
			names[l.Name] = l.Index
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// Both forms of veth:N leave the pairs' eth ends in the namespace and their
// peers in the parent: made there directly, or (moved) made beside their
// eth and moved out. Their ifindexes tell the two apart: a peer made in the
// fresh parent is numbered there, as its eth is in the fresh namespace
// (both 2, then 3); a moved peer keeps the number it got beside its eth,
// made just before it (eth's - 1), free in the parent. Real kernel, in namespaces of the
// test's own.
func TestVethsToParent(t *testing.T) {
	if testing.Short() || os.Geteuid() != 0 {
		t.Skip("needs root (network namespaces)")
	}
	for _, spec := range []string{"veth:2", "veth:2:moved"} {
		t.Run(spec, func(t *testing.T) {
			p, err := ParsePayload(spec)
			if err != nil {
				t.Fatal(err)
			}
			parent, err := namespace.Unshare()
			if err != nil {
				t.Fatal(err)
			}
			defer parent.Close()
			pod, err := namespace.Unshare()
			if err != nil {
				t.Fatal(err)
			}
			defer pod.Close()
			if err := namespace.Run(pod, func() error { return p.apply(parent, 7, true) }); err != nil {
				t.Fatal(err)
			}
			in, out := linkIndexes(t, pod), linkIndexes(t, parent)
			moved := strings.HasSuffix(spec, ":moved")
			for i, pair := range [][2]string{{"eth0", "v7"}, {"eth1", "v7_1"}} {
				eth, peer := pair[0], pair[1]
				if in[eth] == 0 || out[eth] != 0 || in[peer] != 0 || out[peer] == 0 {
					t.Fatalf("pair %d: %s in the namespace as %d, in the parent as %d; %s in the namespace as %d, in the parent as %d",
						i, eth, in[eth], out[eth], peer, in[peer], out[peer])
				}
				if want := in[eth] - map[bool]int32{false: 0, true: 1}[moved]; out[peer] != want {
					t.Errorf("%s's peer %s is ifindex %d in the parent, want %d (%s is %d)", eth, peer, out[peer], want, eth, in[eth])
				}
			}
		})
	}
}
