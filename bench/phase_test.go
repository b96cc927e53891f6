package bench

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"testing"
)

// A bench document written before the instruments' fields left
// batch.Phase (testdata/report-before.json: `bench --kind ifb --count 200
// --delete group,serial,netns --bystander getlink --json` at 5f4bd87, its
// traces cut to three points, with the fields only tracing fills added to
// one phase) reads into a Report and writes back with the same keys and
// values. Only their order within a phase may differ: bench.Phase writes
// batch.Phase's fields, then its own.
func TestReportDocumentUnchanged(t *testing.T) {
	before, err := os.ReadFile("testdata/report-before.json")
	if err != nil {
		t.Fatal(err)
	}
	var r Report
	dec := json.NewDecoder(bytes.NewReader(before))
	dec.DisallowUnknownFields() // a key the types no longer hold fails here
	if err := dec.Decode(&r); err != nil {
		t.Fatal(err)
	}
	after, err := json.Marshal(&r)
	if err != nil {
		t.Fatal(err)
	}
	var a, b any
	if err := json.Unmarshal(before, &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(after, &b); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Errorf("the document changed:\nbefore %s\nafter  %s", before, after)
	}
	d := r.Runs[0].Delete
	if d.Bystander == nil || d.RCU["synchronize_net"] != 2 || len(d.Profile) != 1 || d.UnattributedNS != 1000 || r.Runs[0].Create.KernelMem == nil {
		t.Errorf("instrument fields not read: %+v", d)
	}
}
