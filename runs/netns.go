package runs

import (
	"fmt"

	"github.com/vishvananda/netns"

	"github.com/devbulk/devbulk/namespace"
)

// recordedNetns opens a namespace a record names (a run's, or the one a
// move took part of it to): by its --netns when
// that still means the recorded inode, else by the inode among every
// namespace still held (a process, a descriptor or a bind mount). It
// returns where it found it; a closed handle means it is gone. An inode can
// be reused by a later namespace: the caller still checks the devices.
func recordedNetns(r Place) (netns.NsHandle, string) {
	if ns, err := openRecorded(r); err == nil {
		return ns, r.Netns
	}
	path, ok := namespace.Find(r.Inode)
	if !ok {
		return netns.None(), ""
	}
	ns, err := namespace.OpenFile(path)
	if err != nil {
		return netns.None(), "" // gone meanwhile
	}
	if !r.In(ns.Inode, ns.Cookie) {
		ns.Close()
		return netns.None(), ""
	}
	return ns.Handle, path
}

// openRecorded opens a recorded namespace by its --netns, if that still
// leads to the recorded inode.
func openRecorded(r Place) (netns.NsHandle, error) {
	path, _, err := namespace.Resolve(r.Netns)
	if err != nil {
		return netns.None(), err
	}
	ns, err := namespace.OpenFile(path)
	if err == nil && !r.In(ns.Inode, ns.Cookie) {
		ns.Close()
		err = fmt.Errorf("netns %s is now another namespace (inode %d, recorded %d)", r.Netns, ns.Inode, r.Inode)
	}
	return ns.Handle, err
}
