package runs

import (
	"path/filepath"
	"reflect"
	"testing"
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
