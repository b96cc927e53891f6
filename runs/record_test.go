package runs

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/devbulk/devbulk/internal/owner"
	"github.com/devbulk/devbulk/namespace"
	"github.com/devbulk/devbulk/nlbatch"
)

func goodRecord() *Record {
	return &Record{Group: 0x1234abcd, Prefix: "dbk", Kind: "ifb", Place: Place{Netns: "test", Inode: 4026532000},
		Links:  []nlbatch.Link{{Index: 5, Name: "dbk0"}, {Index: 6, Name: "dbk1"}},
		Lowers: []nlbatch.Link{{Index: 7, Name: "dbkl0"}},
		Owner:  owner.Owner{PID: 42, Start: 7, BootID: "b"}, State: Complete}
}

func encode(t testing.TB, r *Record) []byte {
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A record is trusted only when everything ownership rests on is there
// and consistent: each of these made `delete` remove foreign devices once.
func TestParseRefusesRecordsThatWouldClaimForeignDevices(t *testing.T) {
	good := goodRecord()
	if _, err := parse(good.FileName(), encode(t, good)); err != nil {
		t.Fatalf("good record refused: %v", err)
	}
	cases := map[string]func(r *Record) (name string, raw []byte){
		"group 0":           func(r *Record) (string, []byte) { r.Group = 0; return r.FileName(), nil },
		"mark 0":            func(r *Record) (string, []byte) { r.Marks = []uint32{0}; return "", nil },
		"empty prefix":      func(r *Record) (string, []byte) { r.Prefix = ""; return "", nil },
		"empty kind":        func(r *Record) (string, []byte) { r.Kind = ""; return "", nil },
		"unknown kind":      func(r *Record) (string, []byte) { r.Kind = "eth"; return "", nil },
		"no namespace":      func(r *Record) (string, []byte) { r.Inode = 0; return "", nil },
		"no owner":          func(r *Record) (string, []byte) { r.Owner = owner.Owner{}; return "", nil },
		"bad state":         func(r *Record) (string, []byte) { r.State = "done"; return "", nil },
		"foreign name":      func(r *Record) (string, []byte) { r.Links[1].Name = "eth0"; return "", nil },
		"prefix only":       func(r *Record) (string, []byte) { r.Links[1].Name = "dbk"; return "", nil },
		"lower not PREFIXl": func(r *Record) (string, []byte) { r.Lowers[0].Name = "dbk9"; return "", nil },
		"ifindex 0":         func(r *Record) (string, []byte) { r.Links[0].Index = 0; return "", nil },
		"file name":         func(r *Record) (string, []byte) { return "00000001.json", nil },
		"truncated":         func(r *Record) (string, []byte) { return "", encode(t, r)[:40] },
		"trailing data":     func(r *Record) (string, []byte) { return "", append(encode(t, r), []byte(" {}")...) },
		"unknown field":     func(r *Record) (string, []byte) { return "", []byte(`{"group":1,"evil":true}`) },
		"moving nowhere":    func(r *Record) (string, []byte) { r.State = Moving; return "", nil },
		"moved with lowers": func(r *Record) (string, []byte) { r.To = &Part{Place: Place{Netns: "b", Inode: 9}}; return "", nil },
		"moved in place": func(r *Record) (string, []byte) {
			r.Lowers, r.To = nil, &Part{Place: r.Place}
			return "", nil
		},
		"moved to nowhere": func(r *Record) (string, []byte) {
			r.Lowers, r.To = nil, &Part{Place: Place{Netns: "b"}}
			return "", nil
		},
		"moved foreign": func(r *Record) (string, []byte) {
			r.Lowers, r.To = nil, &Part{Place: Place{Netns: "b", Inode: 9}, Links: []nlbatch.Link{{Index: 3, Name: "eth0"}}}
			return "", nil
		},
		"to_links without to": func(r *Record) (string, []byte) {
			return "", bytes.Replace(encode(t, r), []byte(`"links":`), []byte(`"to_links":[[3,0,1]],"links":`), 1)
		},
	}
	for what, spoil := range cases {
		r := goodRecord()
		name, raw := spoil(r)
		if name == "" {
			name = goodRecord().FileName()
		}
		if raw == nil {
			raw = encode(t, r)
		}
		if _, err := parse(name, raw); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: parse = %v, want ErrMalformed", what, err)
		}
	}
}

// A moved run's record keeps both sides through a save and a read, and
// turns and settles as the move and delete need: an empty side goes, and
// a run all on the other side is recorded there.
func TestMovedRecordKeepsBothSides(t *testing.T) {
	r := goodRecord()
	r.Lowers, r.State, r.Abandoned = nil, Moving, true
	r.To = &Part{Place: Place{Netns: "b", Inode: 9, Cookie: 4}, Links: []nlbatch.Link{{Index: 40, Name: "dbk7"}}}
	back, err := parse(r.FileName(), encode(t, r))
	if err != nil || !reflect.DeepEqual(back, r) {
		t.Fatalf("round trip: %+v, %v; want %+v", back, err, r)
	}
	if !back.Touches(namespace.ID{Inode: 9, Cookie: 4}) || back.Touches(namespace.ID{Inode: 9, Cookie: 5}) || !back.Touches(namespace.ID{Inode: r.Inode}) || back.Devices() != 3 {
		t.Errorf("Touches and Devices of %v", back)
	}
	back.settle()
	if back.To == nil {
		t.Fatal("a move under way lost its destination")
	}
	back.State, back.Links = Complete, nil
	back.settle()
	if back.To != nil || back.Netns != "b" || len(back.Links) != 1 || back.Links[0].Name != "dbk7" {
		t.Errorf("a run all on the other side: %+v, want recorded in b", back)
	}
}

// Records are written through fresh O_EXCL temporary files and renamed:
// a symlink planted where the record or a temporary file goes is replaced
// or ignored, never written through.
func TestSaveNeverWritesThroughSymlinks(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "runs"))
	if err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := goodRecord()
	for _, name := range []string{r.FileName(), r.FileName() + ".tmp", ".record-1.tmp"} {
		if err := os.Symlink(victim, filepath.Join(s.Dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Save(r); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Fatalf("the symlink's target was written: %q", b)
	}
	recs, bad, err := s.Load()
	if err != nil || len(recs) != 1 || len(bad) != 0 || recs[0].Group != r.Group {
		t.Fatalf("Load = %v, %v, %v", recs, bad, err)
	}
}

// A state directory others could write, or a symlink, is refused; a
// missing one is made 0700.
func TestOpenRefusesUnsafeDirectories(t *testing.T) {
	base := t.TempDir()
	fresh := filepath.Join(base, "fresh")
	if _, err := Open(fresh); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(fresh); st.Mode().Perm() != 0o700 {
		t.Errorf("new state directory mode %v, want 0700", st.Mode().Perm())
	}
	open := filepath.Join(base, "open")
	os.Mkdir(open, 0o777)
	os.Chmod(open, 0o777)
	link := filepath.Join(base, "link")
	os.Symlink(fresh, link)
	for _, dir := range []string{open, link} {
		if _, err := Open(dir); !errors.Is(err, ErrUnsafeDir) {
			t.Errorf("Open(%s) = %v, want ErrUnsafeDir", dir, err)
		}
	}
}

// One broken file is reported, not fatal, and Quarantine moves it aside.
func TestBadRecordsAreReportedAndMovedAside(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "runs"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Save(goodRecord()); err != nil {
		t.Fatal(err)
	}
	broken := filepath.Join(s.Dir, "deadbeef.json")
	os.WriteFile(broken, []byte(`{"group": 3735928559, "pre`), 0o600)
	recs, bad, err := s.Load()
	if err != nil || len(recs) != 1 || len(bad) != 1 || bad[0].File != broken {
		t.Fatalf("Load = %v, %v, %v", recs, bad, err)
	}
	to, err := s.Quarantine(bad[0])
	if err != nil || !strings.HasPrefix(to, filepath.Join(s.Dir, "malformed")) {
		t.Fatalf("Quarantine = %q, %v", to, err)
	}
	if _, bad, _ := s.Load(); len(bad) != 0 {
		t.Errorf("still bad after quarantine: %v", bad)
	}
}

func FuzzParseRecord(f *testing.F) {
	good := goodRecord()
	f.Add(good.FileName(), encode(f, good))
	f.Add("00000000.json", []byte(`{"group":0}`))
	f.Add(good.FileName(), []byte(`{`))
	f.Fuzz(func(t *testing.T, name string, b []byte) {
		r, err := parse(name, b)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v is not ErrMalformed", err)
			}
			return
		}
		// What parse accepts is what ownership may rest on.
		if r.Group == 0 || r.Prefix == "" || name != r.FileName() || r.Validate() != nil {
			t.Fatalf("accepted %+v from %q", r, name)
		}
		for _, l := range append(r.Links, r.Lowers...) {
			if !strings.HasPrefix(l.Name, r.Prefix) || l.Index <= 0 {
				t.Fatalf("accepted device %+v outside prefix %q", l, r.Prefix)
			}
		}
		// It round-trips.
		if _, err := parse(name, encode(t, r)); err != nil {
			t.Fatalf("re-encoded record refused: %v", err)
		}
	})
}

// A record of the devbulk before owners were recorded is read, never alive.
func TestLegacyRecordsAreRead(t *testing.T) {
	old := `{"group":305441741,"prefix":"dbk","kind":"ifb","netns":"test","netns_inode":4026532000,` +
		`"links":[{"Index":5,"Name":"dbk0","Kind":"","Group":0,"Parent":0,"Flags":0}],"pid":42,"complete":true}`
	r, err := parse("1234abcd.json", []byte(old))
	if err != nil || r.State != Complete || r.Owner.PID != 42 || r.Owner.Alive() || len(r.Links) != 1 {
		t.Fatalf("parse = %+v, %v", r, err)
	}
}

// A malformed record's error is ErrMalformed and still its cause: callers
// reach both with errors.Is and errors.As.
func TestMalformedKeepsItsCause(t *testing.T) {
	_, err := parse("1234abcd.json", []byte(`{"group": "not a number"}`))
	var typeErr *json.UnmarshalTypeError
	if !errors.Is(err, ErrMalformed) || !errors.As(err, &typeErr) {
		t.Errorf("parse: %v: want ErrMalformed wrapping a *json.UnmarshalTypeError", err)
	}
}
