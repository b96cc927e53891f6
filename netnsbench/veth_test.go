package netnsbench

import (
	"os"
	"testing"

	"github.com/vishvananda/netns"

	"github.com/devbulk/devbulk/namespace"
	"github.com/devbulk/devbulk/nlbatch"
)

// linkNames lists the names of the links of ns.
func linkNames(t *testing.T, ns netns.NsHandle) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	err := namespace.Run(ns, func() error {
		c, err := nlbatch.DialHere(nlbatch.Options{})
		if err != nil {
			return err
		}
		defer c.Close()
		links, err := c.Links()
		for _, l := range links {
			names[l.Name] = true
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// Both forms of veth:N leave the pairs' eth ends in the namespace and their
// peers in the parent: made there directly, or (moved) made beside eth0 and
// moved out. Real kernel, in namespaces of the test's own.
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
			in, out := linkNames(t, pod), linkNames(t, parent)
			for _, name := range []string{"eth0", "eth1"} {
				if !in[name] || out[name] {
					t.Errorf("%s: in the namespace %v, in the parent %v", name, in[name], out[name])
				}
			}
			for _, name := range []string{"v7", "v7_1"} {
				if in[name] || !out[name] {
					t.Errorf("%s: in the namespace %v, in the parent %v", name, in[name], out[name])
				}
			}
		})
	}
}
