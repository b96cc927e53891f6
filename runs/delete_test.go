package runs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/devbulk/devbulk/batch"
	"github.com/devbulk/devbulk/devices"
	"github.com/devbulk/devbulk/namespace"
	"github.com/devbulk/devbulk/nlbatch"
	"github.com/devbulk/devbulk/nlbatch/nlbatchtest"
)

// fakeStore is a store in a temporary directory and a fake kernel holding
// lo and eth0 (someone's), with a Conn to it.
func fakeStore(t *testing.T) (*Store, *nlbatchtest.Kernel, *nlbatch.Conn) {
	t.Helper()
	s, err := Open(filepath.Join(t.TempDir(), "runs"))
	if err != nil {
		t.Fatal(err)
	}
	k := &nlbatchtest.Kernel{}
	k.Add(nlbatchtest.Link{Name: "lo"})
	k.Add(nlbatchtest.Link{Name: "eth0", Kind: "veth"})
	return s, k, nlbatch.NewConn(k, 1<<20, 1<<20)
}

// testNS is the fake kernel's namespace as a record names it.
var testNS = namespace.NS{Handle: netns.None(), Name: "test", ID: namespace.ID{Inode: 1}}

func create(t *testing.T, s *Store, c *nlbatch.Conn, o batch.CreateOptions) *Record {
	t.Helper()
	o.NS, o.Strategy = testNS, batch.CreatePipelined
	_, rec, err := s.Create(context.Background(), c, o)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

func stateOnDisk(t *testing.T, s *Store, r *Record) State {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(s.Dir, r.FileName()))
	if err != nil {
		t.Fatal(err)
	}
	got, err := parse(r.FileName(), b)
	if err != nil {
		t.Fatal(err)
	}
	return got.State
}

// A delete refused or stopped before it changed anything leaves the record
// "complete": marking it "deleting" would make a later cleanup delete the
// user's run.
func TestRefusedDeleteKeepsTheRecordComplete(t *testing.T) {
	s, k, c := fakeStore(t)
	mv := create(t, s, c, batch.CreateOptions{Kind: devices.Macvlan, Devices: devices.Options{Count: 3, Prefix: "mv"}, Parents: []string{"eth0"}})
	ifb := create(t, s, c, batch.CreateOptions{Kind: devices.Ifb, Devices: devices.Options{Count: 3, Prefix: "dbk"}})
	k.Add(nlbatchtest.Link{Name: "theirs", Kind: "macvlan", Parent: ifb.Links[0].Index})
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	busy := mv.Links[1].Index
	k.Refuse = func(ix int32) unix.Errno {
		if ix == busy {
			return unix.EOPNOTSUPP
		}
		return 0
	}
	for _, c2 := range []struct {
		what   string
		ctx    context.Context
		prefix string
		d      batch.DeleteStrategy
		want   error
	}{
		{"lower strategy on parents devbulk did not create", context.Background(), "mv", batch.DeleteLower, batch.ErrNotApplicable},
		{"a foreign upper on a run's device", context.Background(), "dbk", batch.DeleteSerial, batch.ErrForeignDependents},
		// The group strategy marks the record before its one look, and
		// puts the state back when that look refuses.
		{"a foreign upper on a run's device, by group", context.Background(), "dbk", batch.DeleteGroup, batch.ErrForeignDependents},
		{"interrupted before the first device", cancelled, "mv", batch.DeleteSerial, nil},
		{"the kernel refuses the group delete", context.Background(), "mv", batch.DeleteGroup, unix.EOPNOTSUPP},
	} {
		rep, err := s.Delete(c2.ctx, c, DeleteOptions{NS: testNS, Prefix: c2.prefix, Strategy: c2.d})
		if err == nil {
			err = rep.Err()
		}
		if c2.want != nil && !errors.Is(err, c2.want) {
			t.Errorf("%s: %v, want %v", c2.what, err, c2.want)
		}
		for _, r := range []*Record{mv, ifb} {
			if st := stateOnDisk(t, s, r); st != Complete {
				t.Errorf("%s: %s is now %q on disk", c2.what, r, st)
			}
		}
	}
	if n := len(k.Links()); n != 9 {
		t.Errorf("%d links in the kernel, want 9 (nothing deleted)", n)
	}
}

// Several runs: one refused means none is deleted.
func TestOneRefusalStopsEveryRun(t *testing.T) {
	s, k, c := fakeStore(t)
	a := create(t, s, c, batch.CreateOptions{Kind: devices.Ifb, Devices: devices.Options{Count: 2, Prefix: "a"}})
	b := create(t, s, c, batch.CreateOptions{Kind: devices.Ifb, Devices: devices.Options{Count: 2, Prefix: "b"}})
	k.Add(nlbatchtest.Link{Name: "theirs", Kind: "macvlan", Parent: b.Links[1].Index})
	rep, err := s.Delete(context.Background(), c, DeleteOptions{NS: testNS, Strategy: batch.DeleteGroup})
	if err != nil || !errors.Is(rep.Err(), batch.ErrForeignDependents) {
		t.Fatalf("%v / %v, want the refusal", err, rep.Err())
	}
	if n := len(k.Links()); n != 7 {
		t.Errorf("%d links in the kernel, want 7: run %s was deleted beside the refused one", n, a)
	}
}

// A delete that ran marks the record "deleting" under this process while
// it works, and removes it once nothing is left.
func TestDeleteRemovesTheRecordWhenDone(t *testing.T) {
	s, k, c := fakeStore(t)
	r := create(t, s, c, batch.CreateOptions{Kind: devices.Ifb, Devices: devices.Options{Count: 4, Prefix: "dbk"}})
	var seen State
	k.After = func(typ, _ uint16) {
		if typ == unix.RTM_DELLINK && seen == "" {
			if b, err := os.ReadFile(filepath.Join(s.Dir, r.FileName())); err == nil {
				if got, err := parse(r.FileName(), b); err == nil && got.Owner.Alive() {
					seen = got.State
				}
			}
		}
	}
	rep, err := s.Delete(context.Background(), c, DeleteOptions{NS: testNS, Strategy: batch.DeleteSerial})
	if err != nil || rep.Err() != nil || len(rep.Runs) != 1 || !rep.Runs[0].Removed || rep.Runs[0].Phase.Deleted != 4 {
		t.Fatalf("%v / %+v", err, rep)
	}
	if seen != Deleting {
		t.Errorf("state during the delete: %q, want deleting", seen)
	}
	if _, err := os.Stat(filepath.Join(s.Dir, r.FileName())); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("record still there: %v", err)
	}
}
