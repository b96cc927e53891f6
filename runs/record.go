package runs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/devbulk/devbulk/batch"
	"github.com/devbulk/devbulk/devices"
	"github.com/devbulk/devbulk/internal/owner"
	"github.com/devbulk/devbulk/namespace"
	"github.com/devbulk/devbulk/nlbatch"
)

// State is where a run is in its life.
type State string

// The states of a run, in order.
const (
	// Creating: saved before the first device was created. A dead owner
	// means devbulk was killed while creating.
	Creating State = "creating"
	// Complete: every device created and recorded; the devices are the
	// user's to use until `devbulk delete`.
	Complete State = "complete"
	// Deleting: saved before the first delete request. A dead owner means
	// devbulk was killed while deleting; Cleanup finishes the job.
	Deleting State = "deleting"
	// Moving: saved before `devbulk move` sends its first request, with
	// Record.To the destination. A dead owner means devbulk was killed
	// while moving: each link is in either namespace (resolveMove finds
	// which); Cleanup deletes them in both.
	Moving State = "moving"
)

// Place is a namespace as a record names it: the --netns it was given (a
// name from /run/netns, a path, or "current"), its inode, and its cookie
// (see namespace.NS; none in records of older devbulks or kernels).
type Place struct {
	Netns  string `json:"netns"`
	Inode  uint64 `json:"netns_inode"`
	Cookie uint64 `json:"netns_cookie,omitempty"`
}

// placeOf is where a record names namespace n.
func placeOf(n namespace.NS) Place { return Place{Netns: n.Name, Inode: n.Inode, Cookie: n.Cookie} }

// ID is the namespace p names, whatever name it was given.
func (p Place) ID() namespace.ID { return namespace.ID{Inode: p.Inode, Cookie: p.Cookie} }

// In reports whether p is namespace id (namespace.ID.Is).
func (p Place) In(id namespace.ID) bool { return p.ID().Is(id) }

// Part is the other namespace of a run that `devbulk move` took part of the
// way, and the run's links there.
type Part struct {
	Place
	Links []nlbatch.Link `json:"-"` // written as the record's to_links
}

// Record is the persisted ownership of one run.
type Record struct {
	Group  uint32   `json:"group"`
	Marks  []uint32 `json:"marks,omitempty"` // groups a group delete moved the devices to
	Prefix string   `json:"prefix"`
	Kind   string   `json:"kind"`
	// Place is the namespace the run was made in (or moved into whole),
	// where Links and Lowers are.
	Place
	Links  []nlbatch.Link `json:"links"`
	Lowers []nlbatch.Link `json:"lowers,omitempty"`
	// To is set while `devbulk move` moves the run (State Moving) and
	// after a move that took only part of its links (interrupted, or
	// refused for some): the other namespace, with the links there. A run
	// with lower devices is never moved: they stay on this side.
	To *Part `json:"to,omitempty"`
	// Abandoned is set by Cleanup on a run killed while moving, before it
	// deletes the run on both sides: a plain cleanup interrupted there (or
	// failing part-way) leaves the rest to the next one, whatever the
	// state. A later move clears it.
	Abandoned bool        `json:"abandoned,omitempty"`
	Owner     owner.Owner `json:"owner"`
	State     State       `json:"state"`
	// Created is when the record was first saved (none in records of
	// devbulk before it): `devbulk runs` tells a run's age.
	Created time.Time `json:"created,omitzero"`
}

// FileName is the record's file name in a Store: its group, in hex.
func (r *Record) FileName() string { return fmt.Sprintf("%08x.json", r.Group) }

// ErrMalformed marks a record file that is not a valid record.
var ErrMalformed = errors.New("malformed record")

// parse reads the record in file name: one JSON object, no unknown
// fields, nothing after it, valid (see Validate), and named after its group.
func parse(name string, b []byte) (*Record, error) {
	r := &Record{}
	if err := decodeStrict(b, r); err != nil {
		legacy, lerr := parseLegacy(b)
		if lerr != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrMalformed, name, err)
		}
		r = legacy
	}
	if err := r.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrMalformed, name, err)
	}
	if name != r.FileName() {
		return nil, fmt.Errorf("%w: %s holds the record of group %d, which belongs in %s", ErrMalformed, name, r.Group, r.FileName())
	}
	return r, nil
}

// decodeStrict decodes one JSON object into v: no unknown fields, nothing
// after it.
func decodeStrict(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return errors.New("data after the record")
	}
	return nil
}

// legacyBoot is the boot id given to records of devbulk before owners were
// recorded: no process matches it, so such a run is never taken as alive.
const legacyBoot = "legacy"

// parseLegacy reads a record written by devbulk before this format (a bare
// pid and a complete flag), so that an upgrade loses no run.
func parseLegacy(b []byte) (*Record, error) {
	r := &Record{}
	old := struct {
		wire
		PID      int  `json:"pid"`
		Complete bool `json:"complete"`
	}{wire: wire{fields: (*fields)(r)}}
	if err := decodeStrict(b, &old); err != nil {
		return nil, err
	}
	if err := old.links(r); err != nil {
		return nil, err
	}
	r.Owner, r.State = owner.Owner{PID: old.PID, BootID: legacyBoot}, Creating
	if old.Complete {
		r.State = Complete
	}
	return r, nil
}

// fields is Record without its JSON methods.
type fields Record

// wire is a record as written: its links and lowers as runs (links.go).
type wire struct {
	*fields
	Links   json.RawMessage `json:"links"`
	Lowers  json.RawMessage `json:"lowers,omitempty"`
	ToLinks json.RawMessage `json:"to_links,omitempty"`
}

// links decodes w's link lists into r.
func (w *wire) links(r *Record) (err error) {
	if r.Links, err = decodeLinks(w.Links, r.Prefix, maxRecordDevices); err != nil {
		return fmt.Errorf("links: %w", err)
	}
	if r.Lowers, err = decodeLinks(w.Lowers, r.Prefix+"l", maxRecordDevices-len(r.Links)); err != nil {
		return fmt.Errorf("lowers: %w", err)
	}
	if r.To == nil {
		if len(w.ToLinks) > 0 && string(w.ToLinks) != "null" {
			return errors.New("to_links without to")
		}
		return nil
	}
	if r.To.Links, err = decodeLinks(w.ToLinks, r.Prefix, maxRecordDevices-len(r.Links)-len(r.Lowers)); err != nil {
		return fmt.Errorf("to_links: %w", err)
	}
	return nil
}

// MarshalJSON writes the record with its links as runs.
func (r Record) MarshalJSON() ([]byte, error) {
	w := struct {
		*fields
		Links   []any `json:"links"`
		Lowers  []any `json:"lowers,omitempty"`
		ToLinks []any `json:"to_links,omitempty"`
	}{(*fields)(&r), encodeLinks(r.Links, r.Prefix), encodeLinks(r.Lowers, r.Prefix+"l"), nil}
	if r.To != nil {
		w.ToLinks = encodeLinks(r.To.Links, r.Prefix)
	}
	return json.Marshal(w)
}

// UnmarshalJSON reads a record strictly (no unknown field), its links as
// runs or, from devbulk before them, one object per link.
func (r *Record) UnmarshalJSON(b []byte) error {
	w := wire{fields: (*fields)(r)}
	if err := decodeStrict(b, &w); err != nil {
		return err
	}
	return w.links(r)
}

// Validate checks what ownership rests on: a nonzero group (0 is every
// device's default), a prefix and kind devbulk makes, a namespace, an owner,
// and device names that are the run's own (PREFIX<n>, lowers PREFIXl<n>).
func (r *Record) Validate() error {
	if r.Group == 0 {
		return errors.New("group 0 is every device's default group, never a run's")
	}
	for _, m := range r.Marks {
		if m == 0 {
			return errors.New("mark 0 is every device's default group, never a run's")
		}
	}
	if err := devices.ValidPrefix(r.Prefix); err != nil {
		return err
	}
	if k, err := devices.Lookup(r.Kind); err != nil {
		return err
	} else if k.Name != r.Kind { // the kernel's IFLA_INFO_KIND, compared as written
		return fmt.Errorf("kind %q: devbulk writes %q", r.Kind, k.Name)
	}
	if r.Netns == "" || r.Inode == 0 {
		return errors.New("no namespace")
	}
	if r.Owner.PID <= 0 || r.Owner.BootID == "" {
		return errors.New("no owner")
	}
	switch r.State {
	case Creating, Complete, Deleting, Moving:
	default:
		return fmt.Errorf("state %q: valid are %s, %s, %s and %s", r.State, Creating, Complete, Deleting, Moving)
	}
	if err := r.validTo(); err != nil {
		return err
	}
	for _, l := range r.Links {
		if err := r.ownName(l, ""); err != nil {
			return err
		}
	}
	for _, l := range r.Lowers {
		if err := r.ownName(l, "l"); err != nil {
			return err
		}
	}
	return nil
}

// validTo checks the other side of a moved run: a namespace that is not
// the run's own, no lower devices (they never move), links of the run's.
func (r *Record) validTo() error {
	if r.To == nil {
		if r.State == Moving {
			return errors.New("state moving without the namespace it moves to")
		}
		return nil
	}
	switch {
	case r.To.Netns == "" || r.To.Inode == 0:
		return errors.New("moved to no namespace")
	case r.To.Inode == r.Inode:
		return errors.New("moved to the namespace it is in")
	case len(r.Lowers) > 0:
		return errors.New("moved with lower devices, which never move")
	}
	for _, l := range r.To.Links {
		if err := r.ownName(l, ""); err != nil {
			return err
		}
	}
	return nil
}

// owns reports whether name is one the run makes (PREFIX<n>, PREFIXl<n>).
func (r *Record) owns(name string) bool {
	return r.ownName(nlbatch.Link{Name: name, Index: 1}, "") == nil || r.ownName(nlbatch.Link{Name: name, Index: 1}, "l") == nil
}

func (r *Record) ownName(l nlbatch.Link, infix string) error {
	rest, ok := strings.CutPrefix(l.Name, r.Prefix+infix)
	if !ok || rest == "" || strings.Trim(rest, "0123456789") != "" || l.Index <= 0 {
		return fmt.Errorf("device %q (ifindex %d) is not one a run with prefix %q makes", l.Name, l.Index, r.Prefix)
	}
	return nil
}

// clone is a copy of r that shares no slice or Part with it.
func (r *Record) clone() *Record {
	c := *r
	c.Marks, c.Links, c.Lowers = slices.Clone(r.Marks), slices.Clone(r.Links), slices.Clone(r.Lowers)
	if r.To != nil {
		to := *r.To
		to.Links = slices.Clone(r.To.Links)
		c.To = &to
	}
	return &c
}

// Set returns the record as a batch.Set.
func (r *Record) Set() (*batch.Set, error) {
	k, err := devices.Lookup(r.Kind)
	if err != nil {
		return nil, err
	}
	return &batch.Set{Kind: k, Group: r.Group, Marks: r.Marks, Prefix: r.Prefix, Links: r.Links, Lowers: r.Lowers}, nil
}

// Touches reports whether the run has, or may have, links in namespace
// id: its own (Record.In) or the one a move took
// part of it to.
func (r *Record) Touches(id namespace.ID) bool {
	return r.In(id) || r.To != nil && r.To.In(id)
}

// turn makes the other side of a moved run the record's own, and its own
// the other, so that what works on a run's namespace works on either.
func (r *Record) turn() {
	r.Place, r.To.Place = r.To.Place, r.Place
	r.Links, r.To.Links = r.To.Links, r.Links
}

// face turns a moved run so that its own side is namespace id, when that
// is the other.
func (r *Record) face(id namespace.ID) {
	if r.To != nil && !r.In(id) && r.To.In(id) {
		r.turn()
	}
}

// settle drops the empty side of a moved run: a run all in one namespace is
// recorded there. A move under way (Moving) keeps both.
func (r *Record) settle() {
	if r.To == nil || r.State == Moving {
		return
	}
	if r.here() == 0 {
		r.turn()
	}
	if len(r.To.Links) == 0 {
		r.To = nil
	}
}

// here is the number of devices on the run's own side, lowers included.
func (r *Record) here() int { return len(r.Links) + len(r.Lowers) }

// Devices is the number of devices the record holds, lowers and links
// moved elsewhere included.
func (r *Record) Devices() int {
	n := r.here()
	if r.To != nil {
		n += len(r.To.Links)
	}
	return n
}

func (r *Record) String() string {
	s := fmt.Sprintf("run %s (%s, group %d) in netns %s", r.Prefix, r.Kind, r.Group, r.Netns)
	if r.To != nil {
		s += " and " + r.To.Netns
	}
	if r.Abandoned {
		s += " (abandoned by a killed move)"
	}
	return s
}
