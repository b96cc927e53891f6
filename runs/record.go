package runs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/devbulk/devbulk/batch"
	"github.com/devbulk/devbulk/devices"
	"github.com/devbulk/devbulk/internal/owner"
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
)

// Record is the persisted ownership of one run.
type Record struct {
	Group  uint32   `json:"group"`
	Marks  []uint32 `json:"marks,omitempty"` // groups a group delete moved the devices to
	Prefix string   `json:"prefix"`
	Kind   string   `json:"kind"`
	// Netns is the --netns the run was made with: a name from /run/netns,
	// a path, or "current"; Inode and Cookie are that namespace (see
	// netnsCookie; no cookie in records of older devbulks or kernels).
	Netns  string         `json:"netns"`
	Inode  uint64         `json:"netns_inode"`
	Cookie uint64         `json:"netns_cookie,omitempty"`
	Links  []nlbatch.Link `json:"links"`
	Lowers []nlbatch.Link `json:"lowers,omitempty"`
	Owner  owner.Owner    `json:"owner"`
	State  State          `json:"state"`
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
	Links  json.RawMessage `json:"links"`
	Lowers json.RawMessage `json:"lowers,omitempty"`
}

// links decodes w's link lists into r.
func (w *wire) links(r *Record) (err error) {
	if r.Links, err = decodeLinks(w.Links, r.Prefix, maxRecordDevices); err != nil {
		return fmt.Errorf("links: %w", err)
	}
	if r.Lowers, err = decodeLinks(w.Lowers, r.Prefix+"l", maxRecordDevices-len(r.Links)); err != nil {
		return fmt.Errorf("lowers: %w", err)
	}
	return nil
}

// MarshalJSON writes the record with its links as runs.
func (r Record) MarshalJSON() ([]byte, error) {
	w := struct {
		*fields
		Links  []any `json:"links"`
		Lowers []any `json:"lowers,omitempty"`
	}{(*fields)(&r), encodeLinks(r.Links, r.Prefix), encodeLinks(r.Lowers, r.Prefix+"l")}
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
	if _, err := devices.Lookup(r.Kind); err != nil {
		return err
	}
	if r.Netns == "" || r.Inode == 0 {
		return errors.New("no namespace")
	}
	if r.Owner.PID <= 0 || r.Owner.BootID == "" {
		return errors.New("no owner")
	}
	switch r.State {
	case Creating, Complete, Deleting:
	default:
		return fmt.Errorf("state %q: valid are %s, %s and %s", r.State, Creating, Complete, Deleting)
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

// Set returns the record as a batch.Set.
func (r *Record) Set() (*batch.Set, error) {
	k, err := devices.Lookup(r.Kind)
	if err != nil {
		return nil, err
	}
	return &batch.Set{Kind: k, Group: r.Group, Marks: r.Marks, Prefix: r.Prefix, Links: r.Links, Lowers: r.Lowers}, nil
}

// In reports whether the run was made in the namespace with inode ino and
// cookie (0: unknown), whatever name either was given: a namespace is its
// inode, and its cookie tells it from a later one that reused the inode.
func (r *Record) In(ino, cookie uint64) bool {
	return r.Inode == ino && (r.Cookie == 0 || cookie == 0 || r.Cookie == cookie)
}

// Devices is the number of devices the record holds, lowers included.
func (r *Record) Devices() int { return len(r.Links) + len(r.Lowers) }

func (r *Record) String() string {
	return fmt.Sprintf("run %s (%s, group %d) in netns %s", r.Prefix, r.Kind, r.Group, r.Netns)
}
