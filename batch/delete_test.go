package batch

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/devbulk/devbulk/devices"
	"github.com/devbulk/devbulk/nlbatch"
	"github.com/devbulk/devbulk/nlbatch/nlbatchtest"
)

// fakeRun is a kernel holding n ifb links of a run in group 7 (and lo), the
// set that owns them, and a Conn to the kernel.
func fakeRun(n int) (*nlbatchtest.Kernel, *Set, *nlbatch.Conn) {
	k := &nlbatchtest.Kernel{}
	k.Add(nlbatchtest.Link{Name: "lo"})
	s := &Set{Kind: devices.Ifb, Group: 7, Prefix: "dbk"}
	for i := range n {
		l := k.Add(nlbatchtest.Link{Name: fmt.Sprintf("dbk%d", i), Kind: "ifb", Group: 7})
		s.Links = append(s.Links, nlbatch.Link{Index: l.Index, Name: l.Name, Group: 7})
	}
	return k, s, nlbatch.NewConn(k, 1<<20, 1<<20)
}

func target(c *nlbatch.Conn) Target { return Target{Conn: c} }

func kernelNames(k *nlbatchtest.Kernel) string {
	var out []string
	for _, l := range k.Links() {
		out = append(out, l.Name)
	}
	return strings.Join(out, " ")
}

// Deletes whose ACK was lost (the kernel executed them) are settled by a
// lookup and counted: the report is what the kernel did.
func TestLostDeleteAcksAreSettledByLookup(t *testing.T) {
	for _, d := range []DeleteStrategy{DeleteSerial, DeletePipelined} {
		k, s, c := fakeRun(10)
		n := 0
		k.LoseAck = func(typ uint16, _ uint32) bool {
			if typ == unix.RTM_DELLINK {
				n++
				return n%2 == 1
			}
			return false
		}
		p, _, err := Delete(context.Background(), target(c), s, d, DeleteOptions{})
		if err != nil || p.Deleted != 10 || p.AcksLost == 0 || len(p.Left) != 0 {
			t.Errorf("%s: %v; deleted %d, %d ACKs lost, left %v", d, err, p.Deleted, p.AcksLost, p.Left)
		}
		if got := kernelNames(k); got != "lo" {
			t.Errorf("%s: the kernel holds %q", d, got)
		}
	}
}

// A delete the kernel refused, whose ACK was lost as well, is never
// counted: the lookup finds the device, which is reported left.
func TestRefusedDeleteWithLostAckIsNotCounted(t *testing.T) {
	k, s, c := fakeRun(4)
	busy := s.Links[2].Index
	k.Refuse = func(ix int32) unix.Errno {
		if ix == busy {
			return unix.EBUSY
		}
		return 0
	}
	k.LoseAck = func(typ uint16, _ uint32) bool { return typ == unix.RTM_DELLINK }
	p, _, err := Delete(context.Background(), target(c), s, DeleteSerial, DeleteOptions{})
	if !errors.Is(err, ErrSurvivors) || p.Deleted != 3 || p.Failed != 1 {
		t.Fatalf("%v; deleted %d, failed %d", err, p.Deleted, p.Failed)
	}
	if len(p.Left) != 1 || p.Left[0].Link.Index != busy || !p.Left[0].Present || len(s.Links) != 1 {
		t.Errorf("left %v, set keeps %v", p.Left, s.Links)
	}
}

// A device whose lookup answer was lost is not deleted: only what was seen
// to be the run's right before the window is named.
func TestLostLookupsDeleteNothing(t *testing.T) {
	k, s, c := fakeRun(5)
	k.LoseAck = func(typ uint16, _ uint32) bool { return typ == unix.RTM_GETLINK }
	p, _, err := Delete(context.Background(), target(c), s, DeleteSerial, DeleteOptions{})
	if err == nil || p.Deleted != 0 {
		t.Errorf("%v; deleted %d", err, p.Deleted)
	}
	if got := kernelNames(k); got != "lo dbk0 dbk1 dbk2 dbk3 dbk4" {
		t.Errorf("the kernel holds %q", got)
	}
}

// A group delete that must re-mark the run (someone put a device in its
// group) stops at the first lost SETLINK ACK: no group delete is sent, and
// the new mark was saved before the first request.
func TestRemarkStopsAtALostAck(t *testing.T) {
	k, s, c := fakeRun(6)
	k.Add(nlbatchtest.Link{Name: "theirs", Kind: "ifb", Group: 7})
	l := &hooks{}
	sets := 0
	k.LoseAck = func(typ uint16, _ uint32) bool {
		if typ == unix.RTM_SETLINK {
			sets++
			return sets == 3
		}
		return false
	}
	p, _, err := Delete(context.Background(), target(c), s, DeleteGroup, DeleteOptions{Ledger: l})
	if err == nil || !errors.Is(err, nlbatch.ErrAckLost) || p.Deleted != 0 {
		t.Fatalf("%v; deleted %d", err, p.Deleted)
	}
	if l.marked != 1 || l.kept != 0 || len(s.Marks) != 1 {
		t.Errorf("mark saved %d times (and the record kept %d), marks %v", l.marked, l.kept, s.Marks)
	}
	if got := kernelNames(k); got != "lo dbk0 dbk1 dbk2 dbk3 dbk4 dbk5 theirs" {
		t.Errorf("the kernel holds %q", got)
	}
	// The next delete, from the saved marks, finishes the job and spares theirs.
	p, _, err = Delete(context.Background(), target(c), s, DeleteGroup, DeleteOptions{})
	if err != nil || p.Deleted != 6 || kernelNames(k) != "lo theirs" {
		t.Errorf("resumed: %v; deleted %d; kernel %q", err, p.Deleted, kernelNames(k))
	}
}

// A creation whose ACK was lost counts as created only when a lookup finds
// the link with the run's group; a refused one (the name was taken) does
// not, and says the outcome was unknown.
func TestCreateSettlesLostAcks(t *testing.T) {
	k := &nlbatchtest.Kernel{}
	k.Add(nlbatchtest.Link{Name: "dbk1", Kind: "ifb"}) // someone's, group 0
	links, err := devices.Ifb.Plan(devices.Options{Count: 3, Prefix: "dbk", Group: 9})
	if err != nil {
		t.Fatal(err)
	}
	k.LoseAck = func(typ uint16, _ uint32) bool { return typ == unix.RTM_NEWLINK }
	p, found, err := Create(context.Background(), nlbatch.NewConn(k, 1<<20, 1<<20), links, RequestOptions{Strategy: CreatePipelined})
	if err != nil {
		t.Fatal(err)
	}
	if found[0].Index == 0 || found[1].Index != 0 || found[2].Index == 0 || p.Failed != 1 || p.AcksLost != 3 {
		t.Errorf("found %v, failed %d, ACKs lost %d", found, p.Failed, p.AcksLost)
	}
	if len(p.Errors) != 1 || !strings.Contains(p.Errors[0], "dbk1: ACK lost and the link is not there") {
		t.Errorf("errors %q", p.Errors)
	}
}

// A device that takes the ifindex and name of one of the run's while a
// one-by-one delete runs is spared: each window is looked up right before
// it is sent.
func TestDeviceReplacedDuringDeleteIsSpared(t *testing.T) {
	k, s, c := fakeRun(5)
	last := s.Links[4]
	dels := 0
	k.After = func(typ, _ uint16) {
		if typ == unix.RTM_DELLINK {
			if dels++; dels == 1 {
				k.Remove(last.Index)
				k.Add(nlbatchtest.Link{Index: last.Index, Name: last.Name, Kind: "ifb"}) // someone's, group 0
			}
		}
	}
	p, _, err := Delete(context.Background(), target(c), s, DeleteSerial, DeleteOptions{})
	if err != nil || p.Deleted != 4 || kernelNames(k) != "lo dbk4" {
		t.Errorf("%v; deleted %d; kernel %q; left %v", err, p.Deleted, kernelNames(k), p.Left)
	}
}

// A group delete whose ACK was lost is settled by the lookups afterwards:
// the kernel did delete the group.
func TestLostGroupDeleteAckIsSettled(t *testing.T) {
	k, s, c := fakeRun(5)
	k.LoseAck = func(typ uint16, _ uint32) bool { return typ == unix.RTM_DELLINK }
	p, _, err := Delete(context.Background(), target(c), s, DeleteGroup, DeleteOptions{})
	if err != nil || p.Deleted != 5 || len(p.Left) != 0 || kernelNames(k) != "lo" {
		t.Errorf("%v; deleted %d, left %v, kernel %q", err, p.Deleted, p.Left, kernelNames(k))
	}
}

// A device of others put on one of the run's while the record is being
// marked (between the mark and the group request) is seen by the one look
// the group strategy takes after the mark: Delete refuses, sends nothing,
// and says so (Acted); a check of group membership alone would let the
// kernel delete it with the run's device.
func TestForeignUpperAddedLateRefusesTheGroupDelete(t *testing.T) {
	k, s, c := fakeRun(3)
	on := s.Links[1].Index
	_, out, err := Delete(context.Background(), target(c), s, DeleteGroup, DeleteOptions{
		Ledger: &hooks{deleting: func() error {
			k.Add(nlbatchtest.Link{Name: "theirs", Kind: "macvlan", Parent: on})
			return nil
		}},
	})
	if !errors.Is(err, ErrForeignDependents) || !strings.Contains(err.Error(), "theirs") || out.Acted {
		t.Errorf("%v (acted %v), want ErrForeignDependents naming theirs, nothing sent", err, out.Acted)
	}
	if got := kernelNames(k); got != "lo dbk0 dbk1 dbk2 theirs" {
		t.Errorf("kernel holds %q after a refused delete", got)
	}
}

// The residual risk, shown: a device moved into the run's group between
// the group check and the group delete goes with the group, and the phase
// says that a device that was not the run's vanished.
func TestForeignDeviceMovedIntoTheGroupIsReported(t *testing.T) {
	k, s, c := fakeRun(3)
	theirs := k.Add(nlbatchtest.Link{Name: "theirs", Kind: "ifb"})
	dumps := 0
	k.After = func(typ, flags uint16) {
		if typ == unix.RTM_GETLINK && flags&unix.NLM_F_DUMP == unix.NLM_F_DUMP {
			if dumps++; dumps == 1 { // the group check, the last look, has just run
				k.Remove(theirs.Index)
				k.Add(nlbatchtest.Link{Index: theirs.Index, Name: "theirs", Kind: "ifb", Group: 7})
			}
		}
	}
	p, _, err := Delete(context.Background(), target(c), s, DeleteGroup, DeleteOptions{})
	if err != nil || p.Deleted != 3 || strings.Join(p.Vanished, ",") != "theirs" {
		t.Errorf("%v; deleted %d, vanished %v", err, p.Deleted, p.Vanished)
	}
	// Without such a change nothing is reported.
	_, s, c = fakeRun(3)
	if p, _, err := Delete(context.Background(), target(c), s, DeleteGroup, DeleteOptions{}); err != nil || len(p.Vanished) != 0 {
		t.Errorf("%v; vanished %v", err, p.Vanished)
	}
}

// A create that fails half-way (another process took one of the run's
// names in between) is undone: everything the run made is deleted by
// group, the other process's device stays, and Forget is called; Keep saw
// the run's ownership before the first device was made.
func TestFailedCreateIsUndone(t *testing.T) {
	k := &nlbatchtest.Kernel{}
	k.Add(nlbatchtest.Link{Name: "lo"})
	made := 0
	k.After = func(typ, _ uint16) {
		if typ == unix.RTM_NEWLINK {
			if made++; made == 3 {
				k.Add(nlbatchtest.Link{Name: "lab7", Kind: "ifb"}) // someone's, group 0
			}
		}
	}
	var kept []bool
	forgot := false
	_, set, err := CreateIn(context.Background(), nlbatch.NewConn(k, 1<<20, 1<<20), CreateOptions{
		Kind: devices.Ifb, Devices: devices.Options{Count: 20, Prefix: "lab"}, Strategy: CreateSerial,
		Ledger: &hooks{keep: func(_ *Set, complete bool) error { kept = append(kept, complete); return nil },
			forget: func() error { forgot = true; return nil }},
	})
	if err == nil || !strings.Contains(err.Error(), "lab7") || set != nil {
		t.Fatalf("create with lab7 taken meanwhile: %v, set %v; want an error naming lab7 and no set", err, set)
	}
	if got := kernelNames(k); got != "lo lab7" {
		t.Errorf("after the undo the kernel holds %q, want lo and the other process's lab7", got)
	}
	if fmt.Sprint(kept) != "[false]" || !forgot {
		t.Errorf("Keep calls %v (want [false]: before the first device), Forget called %v", kept, forgot)
	}
}

// A kernel that echoes new links answers the creation with their
// ifindexes: no lookup follows. One that does not (6.1), or an echo lost to
// an overrun, gets a lookup by name after the phase.
func TestCreateFindsLinksByEchoOrLookup(t *testing.T) {
	for _, tc := range []struct {
		name        string
		echo        bool
		loseEcho    bool
		wantLookups int
	}{
		{"echoed", true, false, 0},
		{"no echo", false, false, 4},
		{"echo lost", true, true, 1},
		{"ACK lost after the echo", true, true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := &nlbatchtest.Kernel{Echo: tc.echo}
			k.Add(nlbatchtest.Link{Name: "lo"})
			links, err := devices.Ifb.Plan(devices.Options{Count: 4, Prefix: "dbk", Group: 9})
			if err != nil {
				t.Fatal(err)
			}
			lookups := 0
			k.After = func(typ, flags uint16) {
				if typ == unix.RTM_GETLINK {
					lookups++
				}
			}
			if tc.loseEcho {
				// The third creation's answers are dropped: its ACK too,
				// or its ACK alone.
				k.LoseAck = func(typ uint16, seq uint32) bool { return typ == unix.RTM_NEWLINK && seq == 3 }
				k.LoseOnlyAck = tc.name == "ACK lost after the echo"
			}
			p, found, err := Create(context.Background(), nlbatch.NewConn(k, 1<<20, 1<<20), links, RequestOptions{Strategy: CreatePipelined, Echo: true})
			if err != nil {
				t.Fatal(err)
			}
			if p.Failed != 0 || lookups != tc.wantLookups {
				t.Errorf("failed %d (%v), lookups %d, want 0 and %d", p.Failed, p.Errors, lookups, tc.wantLookups)
			}
			for i, l := range found {
				if l.Index != int32(i+2) || l.Name != links[i].Name || l.Group != 9 {
					t.Errorf("found[%d] = %+v, want ifindex %d, %s, group 9", i, l, i+2, links[i].Name)
				}
			}
		})
	}
}

// A create of more links than one chunk of serialized requests (a whole
// number of windows, at least 8192) gets each link back in its place, from
// its echo or from the lookups after the phase (8192 at a time), and its
// progress counts every link once, in order.
func TestCreateAcrossChunks(t *testing.T) {
	for _, echo := range []bool{true, false} {
		k := &nlbatchtest.Kernel{Echo: echo}
		// 12 000: two of execChunked's chunks (8192 requests rounded up
		// to whole windows, ~1 200 a window here), the second short.
		links, err := devices.Ifb.Plan(devices.Options{Count: 12000, Prefix: "dbk", Group: 9})
		if err != nil {
			t.Fatal(err)
		}
		last, backwards := 0, false
		p, found, err := Create(context.Background(), nlbatch.NewConn(k, 1<<20, 1<<20), links, RequestOptions{Strategy: CreatePipelined, Echo: echo,
			Progress: func(n int) { backwards = backwards || n < last; last = n }})
		if err != nil || p.Failed != 0 || last != len(links) || backwards {
			t.Fatalf("echo %v: %v; failed %d; progress ended at %d (backwards %v)", echo, err, p.Failed, last, backwards)
		}
		for i, l := range found {
			if l.Name != links[i].Name || l.Index != int32(i+1) || l.Group != 9 {
				t.Fatalf("echo %v: found[%d] = %+v, want %s at ifindex %d", echo, i, l, links[i].Name, i+1)
			}
		}
	}
}

// One consistent dump before and one after answer a group delete's checks:
// no device is looked up by itself. Where every dump is interrupted (a
// namespace that keeps changing) each device is looked up instead, with
// the same verdicts: a device renamed by someone else is left, the rest
// deleted.
func TestDeleteChecksFromOneDumpOrLookups(t *testing.T) {
	for _, interrupted := range []bool{false, true} {
		for _, d := range []DeleteStrategy{DeleteGroup, DeletePipelined} {
			k, s, c := fakeRun(6)
			k.InterruptDumps = interrupted
			renamed := s.Links[1]
			lookups := 0
			k.After = func(typ, flags uint16) {
				if typ == unix.RTM_GETLINK && flags&unix.NLM_F_DUMP != unix.NLM_F_DUMP {
					lookups++
				}
			}
			k.Remove(renamed.Index)
			k.Add(nlbatchtest.Link{Index: renamed.Index, Name: "dbkX", Kind: "ifb", Group: 7})
			p, _, err := Delete(context.Background(), target(c), s, d, DeleteOptions{})
			if !errors.Is(err, ErrSurvivors) || p.Deleted != 5 || len(p.Left) != 1 || !strings.Contains(p.Left[0].Why, "renamed to dbkX") {
				t.Errorf("%s, dumps interrupted %v: %v; deleted %d, left %v", d, interrupted, err, p.Deleted, p.Left)
			}
			if got := kernelNames(k); got != "lo dbkX" {
				t.Errorf("%s, dumps interrupted %v: the kernel holds %q", d, interrupted, got)
			}
			// Right before its requests each strategy looks up the five
			// devices still the run's (group: before it marks them with
			// a new group, as the renamed one keeps the old). Without a
			// consistent dump, all six are looked up before and the five
			// not known gone after.
			want := 5
			if interrupted {
				want += 6 + 5
			}
			if lookups != want {
				t.Errorf("%s, dumps interrupted %v: %d lookups, want %d", d, interrupted, lookups, want)
			}
		}
	}
}

// A group delete of an untouched run looks no device up by itself: the dump
// before and the one after answer every check.
func TestGroupDeleteLooksNothingUp(t *testing.T) {
	k, s, c := fakeRun(6)
	lookups := 0
	k.After = func(typ, flags uint16) {
		if typ == unix.RTM_GETLINK && flags&unix.NLM_F_DUMP != unix.NLM_F_DUMP {
			lookups++
		}
	}
	p, _, err := Delete(context.Background(), target(c), s, DeleteGroup, DeleteOptions{})
	if err != nil || p.Deleted != 6 || lookups != 0 || kernelNames(k) != "lo" {
		t.Errorf("%v; deleted %d, %d lookups, kernel %q", err, p.Deleted, lookups, kernelNames(k))
	}
}

// A one-by-one delete costs devbulk the same per device at any count: its
// allocations grow with N, not N² (the ownership index of the whole set was
// once rebuilt for every window, a window per device: 26 s of devbulk's CPU
// beside a 170 s delete of 10 000 ifb). Counted in allocated bytes, which
// do not depend on the machine's speed.
func TestSerialDeleteIsLinear(t *testing.T) {
	alloc := func(n int) uint64 {
		_, s, c := fakeRun(n)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if p, _, err := Delete(context.Background(), target(c), s, DeleteSerial, DeleteOptions{}); err != nil || p.Deleted != n {
			t.Fatalf("%v; deleted %d of %d", err, p.Deleted, n)
		}
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	small, large := alloc(1000), alloc(4000)
	if ratio := float64(large) / float64(small); ratio > 6 {
		t.Errorf("4000 devices allocated %.1f× what 1000 did (%d and %d bytes): more than linear", ratio, large, small)
	}
}

// hooks is a Ledger that calls the functions it has, and counts the Keeps
// and Markeds.
type hooks struct {
	NoLedger
	keep     func(*Set, bool) error
	deleting func() error
	forget   func() error
	kept     int
	marked   int
}

func (h *hooks) Keep(s *Set, complete bool) error {
	h.kept++
	if h.keep == nil {
		return nil
	}
	return h.keep(s, complete)
}

func (h *hooks) Marked(*Set) error {
	h.marked++
	return nil
}

func (h *hooks) Deleting() error {
	if h.deleting == nil {
		return nil
	}
	return h.deleting()
}

func (h *hooks) Forget() error {
	if h.forget == nil {
		return nil
	}
	return h.forget()
}

// A windowed group delete deletes the set a window at a time, each by one
// request of one reused fresh group (saved once), and spares a device of
// others put in the run's group.
func TestGroupDeleteInWindows(t *testing.T) {
	k, s, c := fakeRun(10)
	k.Add(nlbatchtest.Link{Name: "theirs", Kind: "ifb", Group: 7})
	dels := 0
	k.LoseAck = func(typ uint16, _ uint32) bool {
		if typ == unix.RTM_DELLINK {
			dels++
		}
		return false
	}
	l := &hooks{}
	var seen []int
	p, _, err := Delete(context.Background(), target(c), s, DeleteGroup, DeleteOptions{Own: GroupOptions{Window: 4}, Ledger: l,
		Progress: func(done, _ int) { seen = append(seen, done) }})
	if err != nil || p.Deleted != 10 || kernelNames(k) != "lo theirs" {
		t.Fatalf("%v; deleted %d; kernel %q", err, p.Deleted, kernelNames(k))
	}
	if dels != 3 || l.marked != 1 || len(s.Marks) != 1 {
		t.Errorf("%d group deletes for 10 devices in windows of 4, want 3; mark saved %d times, marks %v", dels, l.marked, s.Marks)
	}
	if fmt.Sprint(seen) != "[4 8 10]" {
		t.Errorf("progress %v", seen)
	}
}

// A device of others put into the reused window group after the first
// window (the lock is free between windows) stops the delete at the next
// window's check: it is spared, the first window's devices count as
// deleted, the error says where it stopped, and the rest stay recorded.
// So does one put on a device of the next window (a macvlan on it).
func TestGroupDeleteInWindowsStopsAtAForeignDevice(t *testing.T) {
	for _, intrude := range []string{"into the group", "on the next window"} {
		k, s, c := fakeRun(10)
		dels := 0
		k.After = func(typ, _ uint16) {
			if typ != unix.RTM_DELLINK {
				return
			}
			if dels++; dels == 1 && intrude == "into the group" {
				k.Add(nlbatchtest.Link{Name: "theirs", Kind: "ifb", Group: s.Marks[0]})
			} else if dels == 1 {
				k.Add(nlbatchtest.Link{Name: "theirs", Kind: "macvlan", Parent: s.Links[5].Index})
			}
		}
		p, out, err := Delete(context.Background(), target(c), s, DeleteGroup, DeleteOptions{Own: GroupOptions{Window: 4}})
		if err == nil || !strings.Contains(err.Error(), "window 2 of 3 (4 devices deleted before it)") {
			t.Errorf("%s: %v", intrude, err)
		}
		if p.Deleted != 4 || !out.Settled || len(s.Links) != 6 || !slices.Contains(strings.Fields(kernelNames(k)), "theirs") {
			t.Errorf("%s: deleted %d, settled %v, %d left recorded; kernel %q", intrude, p.Deleted, out.Settled, len(s.Links), kernelNames(k))
		}
	}
}
