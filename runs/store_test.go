package runs

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/devbulk/devbulk/namespace"
	"github.com/devbulk/devbulk/nlbatch"
)

// reread gives the record as Load read it while its file is unchanged (a
// copy that shares nothing with it), and reads it anew once the file
// changed.
func TestRereadSeesChanges(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "runs"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Save(goodRecord()); err != nil {
		t.Fatal(err)
	}
	recs, _, err := s.Load()
	if err != nil || len(recs) != 1 {
		t.Fatalf("load: %v, %d records", err, len(recs))
	}
	r := recs[0]
	now, err := s.reread(r)
	if err != nil || !reflect.DeepEqual(now, r) || &now.Links[0] == &r.Links[0] {
		t.Fatalf("reread of an unchanged file: %+v, %v (shares its links: %v)", now, err, err == nil && &now.Links[0] == &r.Links[0])
	}
	recs, _, _ = s.Load()
	changed := recs[0].clone()
	changed.State = Deleting
	if err := s.Save(changed); err != nil {
		t.Fatal(err)
	}
	if now, err := s.reread(recs[0]); err != nil || now.State != Deleting {
		t.Errorf("reread after the file changed: %+v, %v", now, err)
	}
}

// A moved run that choose turned to face its other side is given back by
// reread as its file has it: again and resolveMove read a run's own side
// as the one the move started from (a review found the turned copy made a
// killed move's links in the destination unrecorded).
func TestRereadGivesTheRecordAsItsFileHasIt(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "runs"))
	if err != nil {
		t.Fatal(err)
	}
	moved := goodRecord()
	moved.Lowers, moved.Marks = nil, []uint32{0x77}
	moved.To = &Part{Place: Place{Netns: "b", Inode: 4026532999}, Links: []nlbatch.Link{{Index: 9, Name: "dbk2"}}}
	if err := s.Save(moved); err != nil {
		t.Fatal(err)
	}
	recs, _, err := s.Load()
	if err != nil || len(recs) != 1 {
		t.Fatalf("load: %v, %d records", err, len(recs))
	}
	r := recs[0]
	r.face(namespace.ID{Inode: 4026532999}) // as choose faces a run for a delete in b
	if r.Netns != "b" {
		t.Fatalf("face did not turn the run: %+v", r)
	}
	now, err := s.reread(r)
	if err != nil || now.Netns != "test" || now.To.Netns != "b" || !reflect.DeepEqual(now.Links, moved.Links) {
		t.Fatalf("reread: %+v, %v; want the run as its file has it, its own side in test", now, err)
	}
	if &now.Marks[0] == &r.Marks[0] || &now.To.Links[0] == &r.Links[0] {
		t.Error("reread's record shares its slices with the one Load gave")
	}
}
