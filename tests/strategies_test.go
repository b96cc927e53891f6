package tests

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/devbulk/devbulk"

	"github.com/devbulk/devbulk/batch"
	"github.com/devbulk/devbulk/devices"
	"github.com/devbulk/devbulk/kmod"
	"github.com/devbulk/devbulk/nlbatch"
	"github.com/devbulk/devbulk/runs"
)

// Every delete strategy, on every kind this kernel has: the run's devices
// are all gone afterwards, and the devices the test made itself in the same
// namespace — plain, in a group of their own, and even moved into the run's
// group or named with the run's prefix — are all still there.
func TestDeleteStrategies(t *testing.T) {
	// Batched rows take 400: over the windowed row's 300 (two windows),
	besideOthers(t)
	// and 1000 bridges took 16 s a row here for nothing more.
	strategies := []strategyRow{
		{batch.DeleteSerial, nil, 100, true},
		{batch.DeletePipelined, nil, 100, true},
		{batch.DeleteParallel, batch.ParallelOptions{Workers: 4}, 100, true},
		{batch.DeleteGroup, nil, 400, true},
		{batch.DeleteGroup, batch.GroupOptions{Window: 300}, 400, true},
		{batch.DeleteLower, nil, 400, true},
		{batch.DeleteNetns, nil, 400, false},
		{batch.DeleteModule, nil, 400, true},
	}
	tried := map[batch.DeleteStrategy]bool{}
	for _, s := range strategies {
		tried[s.d] = true
	}
	for _, d := range batch.DeleteStrategies() {
		if !tried[d] {
			t.Errorf("delete strategy %s has no row here: it is not tried against the kernel", d)
		}
	}
	for _, k := range devices.All() {
		for _, s := range strategies {
			if s.d.Applies(k, true) != nil {
				continue
			}
			t.Run(fmt.Sprintf("%s/%s/%d", k.Name, s.label(), s.n), func(t *testing.T) {
				needKind(t, k.Name)
				testDelete(t, k, s)
			})
		}
	}
}

// strategyRow is a delete strategy tried on every kind: with its own
// options, on n devices (one by one costs ~16 ms per device: keep those
// runs small); intrude puts test-made devices into the run's group.
type strategyRow struct {
	d       batch.DeleteStrategy
	own     batch.Own
	n       int
	intrude bool
}

// label names the row's subtest: the strategy, or a windowed group's
// group-wW.
func (s strategyRow) label() string {
	if g, ok := s.own.(batch.GroupOptions); ok {
		return g.Label()
	}
	return string(s.d)
}

func testDelete(t *testing.T, k *devices.Kind, row strategyRow) {
	d, n, intrude := row.d, row.n, row.intrude
	if d == batch.DeleteModule {
		needGuest(t)
		if err := batch.ModuleLoaded(k); err != nil {
			t.Fatal(err) // Debian's kernel has every kind as a module
		}
		// Unloading is the whole point: load it again for the next test.
		t.Cleanup(func() { reload(t, k) })
	}
	s := newScratch(t)
	lowerKind := devices.LowerKind(probe)
	plainKind := bystanderKind(k)
	plain := func(name string) devices.Link { return devices.Link{Kind: plainKind, Name: name} }

	// The test's own devices, made before devbulk runs.
	own := []nlbatch.Link{s.add(t, plain("own0")), s.add(t, plain("own1"))}
	s.setGroup(t, own[1], 77)
	intruders := []nlbatch.Link{s.add(t, plain("intr")), s.add(t, plain("dbk90000"))}
	if k.NeedsLower && d != batch.DeleteModule { // an upper of the test's own would rightly block the unload
		lower := s.add(t, devices.Link{Kind: lowerKind, Name: "ownlower"})
		upper, err := k.Plan(devices.Options{Count: 1, Prefix: "ownup", Lowers: []devices.Lower{{Index: lower.Index, Name: lower.Name}}})
		if err != nil {
			t.Fatal(err)
		}
		own = append(own, lower, s.add(t, upper[0]))
	}

	_, rec, err := newStore(t).Create(context.Background(), s.conn, batch.CreateOptions{
		Kind: k, Devices: devices.Options{Count: n, Prefix: "dbk"}, Strategy: batch.CreatePipelined,
		Lower: lowerKind, NS: s.named(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Links) != n {
		t.Fatalf("recorded %d links, want %d", len(rec.Links), n)
	}
	if intrude {
		for _, l := range intruders {
			s.setGroup(t, l, rec.Group)
		}
	}
	own = append(own, intruders...)

	set, err := rec.Set()
	if err != nil {
		t.Fatal(err)
	}
	target := batch.Target{Conn: s.conn, NS: s.ns.NS, Dedicated: s.ns}
	p, _, err := batch.Delete(context.Background(), target, set, d, batch.DeleteOptions{Own: row.own})
	if err != nil {
		t.Fatalf("delete: %v (phase %+v)", err, p)
	}
	if p.Devices != n || p.Deleted != n || p.Failed != 0 || len(p.Errors) != 0 || len(p.Left) != 0 {
		t.Errorf("phase: %d devices, %d deleted, %d failed, errors %v, left %v", p.Devices, p.Deleted, p.Failed, p.Errors, p.Left)
	}
	if d == batch.DeleteNetns {
		// The namespace and everything in it are gone; the kernel's
		// completion must have been observed.
		if p.DrainNS <= 0 || p.DrainNS < p.ReleaseNS || p.DrainMethod == "" {
			t.Errorf("netns drain not measured: release %d ns, drain %d ns, method %q", p.ReleaseNS, p.DrainNS, p.DrainMethod)
		}
		return
	}
	s.requireGone(t, string(d)+" delete", append(rec.Links, rec.Lowers...)...)
	s.requirePresent(t, string(d)+" delete (the test made it)", own...)
}

// newStore is a record store in a directory of the test's own.
func newStore(t *testing.T) *runs.Store {
	t.Helper()
	st, err := runs.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// createRun makes a run of n links of kind k through runs.Store.Create, with
// records in a directory of the test's own.
func createRun(t *testing.T, s *scratch, k *devices.Kind, n int) (*runs.Store, *runs.Record) {
	t.Helper()
	st := newStore(t)
	_, rec, err := st.Create(context.Background(), s.conn, batch.CreateOptions{
		Kind: k, Devices: devices.Options{Count: n, Prefix: "dbk"}, Strategy: batch.CreatePipelined,
		Lower: devices.LowerKind(probe), NS: s.named(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	return st, rec
}

// The module strategy is refused, with the "not supported here" error, where
// the kind's module cannot be unloaded — and nothing is deleted.
func TestModuleStrategyUnsupportedHere(t *testing.T) {
	k := needKind(t, "ifb")
	if batch.ModuleLoaded(k) == nil {
		t.Skip("ifb is a loaded module here: the VM suite tests unloading")
	}
	s := newScratch(t)
	_, rec := createRun(t, s, k, 10)
	set, _ := rec.Set()
	_, _, err := batch.Delete(context.Background(), batch.Target{Conn: s.conn, NS: s.ns.NS}, set, batch.DeleteModule, batch.DeleteOptions{})
	if !errors.Is(err, devbulk.ErrNotSupported) {
		t.Fatalf("module delete: %v, want ErrNotSupported", err)
	}
	s.requirePresent(t, "a refused module strategy", rec.Links...)
}

// A device devbulk did not create, stacked on one of devbulk's lower
// devices, would go with it: every strategy refuses, and deletes nothing.
func TestForeignUpperOnOurLowerIsRefused(t *testing.T) {
	k := needKind(t, "macvlan")
	s := newScratch(t)
	_, rec := createRun(t, s, k, 10)
	lower := rec.Lowers[0]
	upper, _ := k.Plan(devices.Options{Count: 1, Prefix: "theirs", Lowers: []devices.Lower{{Index: lower.Index, Name: lower.Name}}})
	theirs := s.add(t, upper[0])
	for _, d := range []batch.DeleteStrategy{batch.DeleteGroup, batch.DeleteLower, batch.DeleteSerial} {
		set, _ := rec.Set()
		_, _, err := batch.Delete(context.Background(), batch.Target{Conn: s.conn, NS: s.ns.NS}, set, d, batch.DeleteOptions{})
		if !errors.Is(err, batch.ErrForeignDependents) || !strings.Contains(err.Error(), theirs.Name) {
			t.Errorf("%s delete with %s on devbulk's lower device: %v, want ErrForeignDependents naming it", d, theirs.Name, err)
		}
	}
	s.requirePresent(t, "a refused delete", append(rec.Links, theirs, lower)...)
}

// A group delete interrupted half-way through re-marking (some devices
// already in the new group) is finished by the next delete from the record.
func TestInterruptedRemarkIsRecovered(t *testing.T) {
	k := needKind(t, "ifb")
	s := newScratch(t)
	st, rec := createRun(t, s, k, 40)
	intruder := s.add(t, devices.Link{Kind: k, Name: "intr"})
	s.setGroup(t, intruder, rec.Group)
	// What an interrupted delete leaves: a saved mark, half the devices moved.
	const mark = 0x7eadbeef
	rec.Marks = []uint32{mark}
	if err := st.Save(rec); err != nil {
		t.Fatal(err)
	}
	for _, l := range rec.Links[:20] {
		s.setGroup(t, l, mark)
	}
	loaded, bad, err := st.Load()
	if err != nil || len(loaded) != 1 || len(bad) != 0 {
		t.Fatalf("records: %v %v %v", loaded, bad, err)
	}
	set, _ := loaded[0].Set()
	p, _, err := batch.Delete(context.Background(), batch.Target{Conn: s.conn, NS: s.ns.NS}, set, batch.DeleteGroup, batch.DeleteOptions{})
	if err != nil || p.Failed != 0 || p.Deleted != 40 {
		t.Fatalf("delete: %v, phase %+v", err, p)
	}
	s.requireGone(t, "the resumed group delete", rec.Links...)
	s.requirePresent(t, "the resumed group delete (it was only in the run's group)", intruder)
}

// A device someone moves into the run's group while the record is marked
// (the ledger told Deleting), right before the group request, is spared: the group
// strategy's one look comes after that, finds a stranger in the
// group, and the run is re-marked. A look before the mark would miss it.
func TestDeviceMovedIntoTheGroupLateIsSpared(t *testing.T) {
	k := needKind(t, "ifb")
	s := newScratch(t)
	_, rec := createRun(t, s, k, 40)
	late := s.add(t, devices.Link{Kind: k, Name: "late"})
	set, _ := rec.Set()
	p, _, err := batch.Delete(context.Background(), batch.Target{Conn: s.conn, NS: s.ns.NS}, set, batch.DeleteGroup, batch.DeleteOptions{
		Ledger: onDeleting(func() error { s.setGroup(t, late, rec.Group); return nil }),
	})
	if err != nil || p.Deleted != 40 || len(set.Marks) != 1 {
		t.Fatalf("delete: %v, deleted %d, marks %v; want 40 deleted through one new mark", err, p.Deleted, set.Marks)
	}
	s.requireGone(t, "the group delete", rec.Links...)
	s.requirePresent(t, "the group delete (moved into the run's group after the checks)", late)
}

// A macvlan of others put on one of the run's devices while the record is
// marked, right before the group request, would go with it: the look after
// the mark sees it, and the delete refuses and sends nothing.
func TestForeignUpperAddedLateIsRefused(t *testing.T) {
	k := needKind(t, "ifb")
	mv := needKind(t, "macvlan")
	s := newScratch(t)
	_, rec := createRun(t, s, k, 10)
	on := rec.Links[3]
	upper, _ := mv.Plan(devices.Options{Count: 1, Prefix: "late", Lowers: []devices.Lower{{Index: on.Index, Name: on.Name}}})
	var theirs nlbatch.Link
	set, _ := rec.Set()
	_, out, err := batch.Delete(context.Background(), batch.Target{Conn: s.conn, NS: s.ns.NS}, set, batch.DeleteGroup, batch.DeleteOptions{
		Ledger: onDeleting(func() error { theirs = s.add(t, upper[0]); return nil }),
	})
	if !errors.Is(err, batch.ErrForeignDependents) || !strings.Contains(err.Error(), theirs.Name) || out.Acted {
		t.Fatalf("group delete with %s put on %s after the mark: %v (acted %v), want ErrForeignDependents naming it, nothing sent", theirs.Name, on.Name, err, out.Acted)
	}
	s.requirePresent(t, "a refused group delete", append(rec.Links, theirs)...)
}

// bystanderKind is the kind of the test's own devices: dummy or ifb, but not
// of the module a module delete of k unloads (that would rightly refuse).
func bystanderKind(k *devices.Kind) *devices.Kind {
	for _, b := range []*devices.Kind{devices.Dummy, devices.Ifb} {
		if probe[b.Name] && b.Module != k.Module {
			return b
		}
	}
	return devices.LowerKind(probe)
}

func reload(t *testing.T, k *devices.Kind) {
	ix, err := kmod.Open(kmod.Dir())
	if err == nil {
		err = ix.Load(k.Module, k.ModuleParams)
	}
	if err != nil {
		t.Errorf("reloading %s: %v", k.Module, err)
	}
}

// The module strategy refuses while another namespace holds a device of the
// module's kinds that devbulk did not create, and deletes nothing.
func TestModuleStrategyRefusesForeignDevices(t *testing.T) {
	needRoot(t)
	needGuest(t)
	var k *devices.Kind
	for _, c := range []*devices.Kind{devices.Dummy, devices.Ifb} {
		if probe[c.Name] && batch.ModuleLoaded(c) == nil {
			k = c
			break
		}
	}
	if k == nil {
		t.Fatal("neither dummy nor ifb is a loaded module in the VM")
	}
	s := newScratch(t)
	other := newScratch(t)
	theirs := other.add(t, devices.Link{Kind: k, Name: "theirs0"})
	_, rec := createRun(t, s, k, 10)
	set, _ := rec.Set()
	_, _, err := batch.Delete(context.Background(), batch.Target{Conn: s.conn, NS: s.ns.NS}, set, batch.DeleteModule, batch.DeleteOptions{})
	if err == nil || !strings.Contains(err.Error(), "theirs0") {
		t.Fatalf("module delete with a foreign %s elsewhere: %v", k.Name, err)
	}
	other.requirePresent(t, "a refused module delete", theirs)
	s.requirePresent(t, "a refused module delete", rec.Links...)
}

// A create cancelled half-way (Ctrl-C in the CLI) undoes all of it: the
// upper devices made so far, and the lower devices devbulk made for them;
// the record goes too. vlan runs in the VM, macvlan here.
func TestCancelledCreateUndoesLowers(t *testing.T) {
	for _, kind := range []string{"vlan", "macvlan"} {
		t.Run(kind, func(t *testing.T) {
			k := needKind(t, kind)
			s := newScratch(t)
			before := s.links(t)
			watch := s.dial(t)
			defer watch.Close()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() {
				for ctx.Err() == nil {
					if _, err := watch.LinkByName("dbk100"); err == nil {
						cancel()
					}
				}
			}()
			st := newStore(t)
			_, rec, err := st.Create(ctx, s.conn, batch.CreateOptions{
				Kind: k, Devices: devices.Options{Count: 30000, Prefix: "dbk"}, Strategy: batch.CreateSerial,
				Lower: devices.LowerKind(probe), NS: s.named(t),
				Force: true, // cancelled after ~100: whether 30 000 fit is not the point (a 1 GiB guest says no)
			})
			if !errors.Is(err, context.Canceled) || rec != nil {
				t.Fatalf("cancelled create: %v, record %v; want context.Canceled and no record", err, rec)
			}
			after := s.links(t)
			if len(after) != len(before) {
				var names []string
				for _, l := range after {
					names = append(names, l.Name)
				}
				t.Errorf("after the undo the namespace holds %d links, want %d: %v", len(after), len(before), names)
			}
			if recs, bad, err := st.Load(); len(recs) != 0 || len(bad) != 0 || err != nil {
				t.Errorf("records left: %v %v %v", recs, bad, err)
			}
		})
	}
}

// onDeleting is a ledger that runs f when told the delete is about to
// send its first request: a test changes the namespace there, as another
// process would.
func onDeleting(f func() error) batch.Ledger { return deletingHook{f: f} }

type deletingHook struct {
	batch.NoLedger
	f func() error
}

func (h deletingHook) Deleting() error { return h.f() }
