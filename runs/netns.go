package runs

import (
	"fmt"

	"github.com/devbulk/devbulk/namespace"
)

// recordedNetns opens a namespace a record names (a run's, or the one a
// move took part of it to): by its --netns when that still means the
// recorded namespace, else by its inode among every namespace still held
// (a process, a descriptor or a bind mount). The namespace's Name is where
// it was found; false means it is gone. An inode can be reused by a later
// namespace: the caller still checks the devices.
func recordedNetns(r Place) (namespace.NS, bool) {
	if ns, err := openRecorded(r); err == nil {
		return ns, true
	}
	path, ok := namespace.Find(r.Inode)
	if !ok {
		return namespace.NS{}, false
	}
	ns, err := namespace.OpenFile(path)
	if err != nil {
		return namespace.NS{}, false // gone meanwhile
	}
	if !r.In(ns.ID) {
		ns.Close()
		return namespace.NS{}, false
	}
	return ns, true
}

// openRecorded opens a recorded namespace by its --netns, if that still
// leads to the recorded namespace.
func openRecorded(r Place) (namespace.NS, error) {
	path, _, err := namespace.Resolve(r.Netns)
	if err != nil {
		return namespace.NS{}, err
	}
	ns, err := namespace.OpenFile(path)
	if err != nil {
		return ns, err
	}
	if !r.In(ns.ID) {
		ns.Close()
		return namespace.NS{}, fmt.Errorf("netns %s is now another namespace (inode %d, recorded %d)", r.Netns, ns.Inode, r.Inode)
	}
	ns.Name = r.Netns
	return ns, nil
}
