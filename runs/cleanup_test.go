package runs

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/devbulk/devbulk/internal/owner"
	"github.com/devbulk/devbulk/nlbatch"
)

// Cleanup's decisions, record by record: a running devbulk's run is never
// touched; a dead devbulk's run whose namespace is gone is pruned as stale
// (complete ones too, since their devices went with the namespace); a
// malformed file is moved aside, never deleted.
func TestCleanupDecisions(t *testing.T) {
	s, _, _ := fakeStore(t)
	rec := func(group uint32, prefix string, o owner.Owner, st State) *Record {
		r := goodRecord()
		r.Group, r.Prefix, r.Owner, r.State = group, prefix, o, st
		r.Netns, r.Inode = "gone-"+prefix, 1 // no namespace has inode 1
		r.Links = []nlbatch.Link{{Index: 5, Name: prefix + "0"}}
		r.Lowers = nil
		if err := s.Save(r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	dead := owner.Owner{PID: 42, Start: 7, BootID: "another boot"}
	running := rec(101, "run", owner.Self(), Creating)
	stale := rec(102, "stl", dead, Deleting)
	complete := rec(103, "cmp", dead, Complete)
	if err := os.WriteFile(filepath.Join(s.Dir, "dbk-bad.json"), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}

	done, err := s.Cleanup(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	var said []string
	for _, d := range done {
		if d.Err != nil {
			t.Errorf("%s: %v", d.What, d.Err)
		}
		said = append(said, d.What)
	}
	all := strings.Join(said, "\n")
	for _, r := range []*Record{stale, complete} {
		if !strings.Contains(all, r.String()+": stale") {
			t.Errorf("cleanup did not prune %s as stale:\n%s", r, all)
		}
		if _, err := os.Stat(filepath.Join(s.Dir, r.FileName())); !os.IsNotExist(err) {
			t.Errorf("%s: record still there (%v)", r, err)
		}
	}
	if strings.Contains(all, running.String()) {
		t.Errorf("cleanup touched a running devbulk's run:\n%s", all)
	}
	if _, err := os.Stat(filepath.Join(s.Dir, running.FileName())); err != nil {
		t.Errorf("the running devbulk's record: %v", err)
	}
	if !strings.Contains(all, "moved aside") || len(done) != 3 {
		t.Errorf("cleanup said %d things, want 3 (two stale, one moved aside):\n%s", len(done), all)
	}
}
