package batch

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/devbulk/devbulk/devices"
	"github.com/devbulk/devbulk/nlbatch"
)

// StateDir holds the records of runs whose devices outlive the devbulk
// process (create in a named or the current namespace), so that delete and
// cleanup know what devbulk made. Bench namespaces need none: the kernel
// removes them when devbulk exits, however it exits.
var StateDir = "/run/devbulk/runs"

// Record is the persisted ownership of one run: written before the first
// device is created, updated with the ifindexes afterwards.
type Record struct {
	Group  uint32         `json:"group"`
	Marks  []uint32       `json:"marks,omitempty"` // groups a group delete moved the devices to
	Prefix string         `json:"prefix"`
	Kind   string         `json:"kind"`
	Netns  string         `json:"netns"` // a name from /run/netns, or "current"
	Inode  uint64         `json:"netns_inode"`
	Links  []nlbatch.Link `json:"links"`
	Lowers []nlbatch.Link `json:"lowers,omitempty"`
	PID    int            `json:"pid"`
	// Complete is set once every device is created and recorded; an
	// incomplete record is what a killed devbulk leaves behind.
	Complete bool `json:"complete"`
}

// Set returns the record as a Set whose changes of group are saved here.
func (r *Record) Set() (*Set, error) {
	k, err := devices.Lookup(r.Kind)
	if err != nil {
		return nil, err
	}
	s := &Set{Kind: k, Group: r.Group, Marks: r.Marks, Prefix: r.Prefix, Links: r.Links, Lowers: r.Lowers}
	s.Persist = func() error {
		r.Marks = s.Marks
		return r.Save()
	}
	return s, nil
}

// Alive reports whether the devbulk process that wrote the record still runs.
func (r *Record) Alive() bool { return DevbulkRunning(r.PID) }

// DevbulkRunning reports whether pid is this process or another running
// devbulk: the owner of state that must not be cleaned up under it.
func DevbulkRunning(pid int) bool {
	if pid <= 0 || pid == os.Getpid() {
		return pid == os.Getpid()
	}
	comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	return err == nil && strings.HasPrefix(string(comm), "devbulk")
}

func (r *Record) path() string { return filepath.Join(StateDir, fmt.Sprintf("%08x.json", r.Group)) }

// Save writes the record atomically.
func (r *Record) Save() error {
	if err := os.MkdirAll(StateDir, 0o700); err != nil {
		return err
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	tmp := r.path() + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, r.path())
}

// Remove deletes the record.
func (r *Record) Remove() error {
	err := os.Remove(r.path())
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// LoadRecords reads every record.
func LoadRecords() ([]*Record, error) {
	files, err := filepath.Glob(filepath.Join(StateDir, "*.json"))
	if err != nil {
		return nil, err
	}
	var out []*Record
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		r := &Record{}
		if err := json.Unmarshal(b, r); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		out = append(out, r)
	}
	return out, nil
}

// GroupRecorded reports whether a record uses group g.
func GroupRecorded(recs []*Record, g uint32) bool {
	for _, r := range recs {
		if r.Group == g {
			return true
		}
	}
	return false
}

// Match reports whether the record is in namespace inode ino and passes the
// optional prefix and kind filters.
func (r *Record) Match(ino uint64, prefix, kind string) bool {
	return r.Inode == ino && (prefix == "" || strings.HasPrefix(r.Prefix, prefix)) && (kind == "" || r.Kind == kind)
}
