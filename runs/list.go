package runs

import (
	"slices"
	"time"

	"github.com/devbulk/devbulk/nlbatch"
)

// Listed is one run as `devbulk runs` shows it: what its record says, and
// what is true of it now (its devbulk running, its namespaces there).
type Listed struct {
	Prefix string `json:"prefix"`
	Kind   string `json:"kind"`
	Group  uint32 `json:"group"`
	// Devices counts every device the record holds: links on both sides
	// of an unfinished move, and lower devices.
	Devices int `json:"devices"`
	// Found, for a run killed while creating (its record lists only what
	// the create recorded before), counts the run's devices in its
	// namespace now: what cleanup will delete. -1: the namespace could
	// not be looked into (gone, or not found).
	Found *int  `json:"found,omitempty"`
	Netns Side  `json:"netns"`
	To    *Side `json:"to,omitempty"` // the other side of an unfinished move
	State State `json:"state"`
	// Stale: every namespace of the run is gone, and its devices with
	// them; cleanup prunes the record.
	Stale bool `json:"stale,omitempty"`
	// Abandoned: a killed move that cleanup has begun to delete.
	Abandoned bool `json:"abandoned,omitempty"`
	PID       int  `json:"pid"`
	// Running: the devbulk that last worked on the run still runs. A run
	// not complete whose devbulk is gone was killed: cleanup finishes it.
	// Dying: it was killed and still finishes a request in the kernel
	// (cleanup waits for it).
	Running bool      `json:"running"`
	Dying   bool      `json:"dying,omitempty"`
	Created time.Time `json:"created,omitzero"`
	File    string    `json:"file"`
}

// Side is one namespace of a run, the run's devices there, and whether
// the namespace is gone (then cleanup prunes the record).
type Side struct {
	Netns   string `json:"name"`
	Inode   uint64 `json:"inode"`
	Devices int    `json:"devices"`
	Gone    bool   `json:"gone,omitempty"`
}

// List reads every record as it stands, without changing any: the runs,
// in the order of their files, and the files that are not records.
func (s *Store) List() ([]Listed, []Bad, error) {
	recs, bad, err := s.Load()
	var st staleness
	out := make([]Listed, 0, len(recs))
	for _, r := range recs {
		l := Listed{
			Prefix: r.Prefix, Kind: r.Kind, Group: r.Group, Devices: r.Devices(),
			Netns: Side{Netns: r.Netns, Inode: r.Inode, Devices: r.here(), Gone: st.gone(r.Place)},
			State: r.State, Abandoned: r.Abandoned, PID: r.Owner.PID, Running: r.Owner.Alive(), Dying: r.Owner.Dying(),
			Created: r.Created, File: s.path(r),
		}
		if r.State == Creating && (!l.Running || l.Dying) {
			n := found(r)
			l.Found = &n
		}
		if r.To != nil {
			l.To = &Side{Netns: r.To.Netns, Inode: r.To.Inode, Devices: len(r.To.Links), Gone: st.gone(r.To.Place)}
		}
		l.Stale = l.Netns.Gone && (l.To == nil || l.To.Gone)
		out = append(out, l)
	}
	return out, bad, err
}

// found counts the devices in r's namespace that are its own by group and
// name, or -1 when the namespace cannot be looked into.
func found(r *Record) int {
	ns, ok := recordedNetns(r.Place)
	if !ok {
		return -1
	}
	defer ns.Close()
	c, err := nlbatch.Dial(ns.Handle, nlbatch.Options{RcvBuf: 1 << 20})
	if err != nil {
		return -1
	}
	defer c.Close()
	links, err := c.ScanLinks()
	if err != nil {
		return -1
	}
	n := 0
	for _, l := range links {
		if (l.Group == r.Group || slices.Contains(r.Marks, l.Group)) && r.owns(l.Name) {
			n++
		}
	}
	return n
}
