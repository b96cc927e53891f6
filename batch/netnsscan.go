package batch

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/devbulk/devbulk/nlbatch"
)

// namespaces finds every network namespace reachable from /proc: those of
// every thread, those held open by file descriptors, and bind mounts (as
// made by `ip netns add`). Keys are nsfs inode numbers.
func namespaces() map[uint64]string {
	found := map[uint64]string{}
	add := func(path string) {
		var st unix.Stat_t
		if unix.Stat(path, &st) == nil {
			if _, ok := found[st.Ino]; !ok {
				found[st.Ino] = path
			}
		}
	}
	tasks, _ := filepath.Glob("/proc/[0-9]*/task/[0-9]*/ns/net")
	for _, p := range tasks {
		add(p)
	}
	fds, _ := filepath.Glob("/proc/[0-9]*/fd/*")
	for _, p := range fds {
		if target, err := os.Readlink(p); err == nil && strings.HasPrefix(target, "net:[") {
			add(p)
		}
	}
	// Bind mounts, in every mount namespace: reached through each
	// namespace's first process's root.
	mntSeen := map[string]bool{}
	infos, _ := filepath.Glob("/proc/[0-9]*/mountinfo")
	for _, info := range infos {
		pid := filepath.Dir(info)
		mnt, err := os.Readlink(pid + "/ns/mnt")
		if err != nil || mntSeen[mnt] {
			continue
		}
		mntSeen[mnt] = true
		f, err := os.Open(info)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if i := slices.Index(fields, "-"); i > 4 && i+1 < len(fields) && fields[i+1] == "nsfs" {
				add(pid + "/root" + fields[4])
			}
		}
		f.Close()
	}
	return found
}

// FindNetns returns a path to the network namespace with nsfs inode ino, if
// any thread, file descriptor or bind mount still holds it.
func FindNetns(ino uint64) (string, bool) {
	path, ok := namespaces()[ino]
	return path, ok
}

// Namespaces lists every network namespace a thread, a file descriptor or a
// bind mount holds, as nsfs inode → a path that opens it: one walk of /proc
// for callers that look several inodes up.
func Namespaces() map[uint64]string { return namespaces() }

// dependent is a device in another named namespace whose lower device
// (IFLA_LINK with IFLA_LINK_NETNSID) is ifindex on in the namespace
// scanned for: a macvlan or vlan made with `link X netns B` goes with X.
type dependent struct {
	name string // with its namespace, for messages
	on   int32
}

// dependentsAway lists the devices in other named namespaces that sit on
// one of the set's recorded devices (or their veth peers here) in t's
// namespace: candidates, which refuseDependents keeps where they sit on a
// device that is still the set's. None for a namespace devbulk made for the
// set, or without a namespace to compare with.
func (s *Set) dependentsAway(t Target) ([]dependent, error) {
	dl := t.dialer()
	if t.Dedicated != nil || dl == nil {
		return nil, nil
	}
	idx := indexes(s.all())
	if s.Kind != nil && s.Kind.Peers {
		for peer := range peerIndexes(s.all()) {
			idx[peer] = true
		}
	}
	paths, err := dl.Elsewhere()
	if err != nil {
		return nil, err
	}
	var out []dependent
	for _, path := range paths {
		found, err := dependentsIn(dl, path, idx)
		if err != nil {
			return nil, fmt.Errorf("netns %s: %w", path, err)
		}
		out = append(out, found...)
	}
	return out, nil
}

// dependentsIn lists the devices of the namespace at path that sit on one of
// idx in the set's namespace.
func dependentsIn(dl Dialer, path string, idx map[int32]bool) ([]dependent, error) {
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
		if l.HasParentNetns && idx[l.Parent] {
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
