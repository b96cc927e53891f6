package tests

// The README's "Safety" guarantees, one test per way devbulk once deleted,
// unmounted or wrote what it did not make, left what it made, or reported
// what did not happen (issue 10's numbered list, cited as "item N").

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/devbulk/devbulk/batch"
	"github.com/devbulk/devbulk/devices"
	"github.com/devbulk/devbulk/namespace"
	"github.com/devbulk/devbulk/nlbatch"
	"github.com/devbulk/devbulk/runs"
)

// ipIn runs ip inside the scratch namespace.
func (s *scratch) ipIn(t *testing.T, args ...string) {
	t.Helper()
	err := namespace.Run(s.ns.NS.Handle, func() error {
		out, err := exec.Command("ip", args...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func (s *scratch) byName(t *testing.T, name string) nlbatch.Link {
	t.Helper()
	l, err := s.conn.LinkByName(name)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return l
}

// Item 1: devices of others on devbulk's own devices — a macvlan, a vxlan
// `dev X`, a macvlan in another named namespace — make every strategy
// refuse, naming them, and nothing is deleted.
func TestForeignDependentsBlockEveryStrategy(t *testing.T) {
	needKind(t, "ifb")
	needKind(t, "macvlan")
	needKind(t, "vxlan")
	s := newScratch(t)
	_, rec := createRun(t, s, devices.Ifb, 4)
	other := namedNetns(t)
	s.ipIn(t, "link", "add", "theirmv", "link", "dbk0", "type", "macvlan")
	s.ipIn(t, "link", "add", "theirvx", "type", "vxlan", "id", "42", "dev", "dbk1", "dstport", "4789")
	s.ipIn(t, "link", "add", "farmv", "link", "dbk2", "netns", other, "type", "macvlan")
	theirs := []nlbatch.Link{s.byName(t, "theirmv"), s.byName(t, "theirvx")}
	for _, d := range []batch.DeleteStrategy{batch.DeleteSerial, batch.DeletePipelined, batch.DeleteParallel, batch.DeleteGroup} {
		set, _ := rec.Set()
		_, _, err := batch.Delete(context.Background(), batch.Target{Conn: s.conn, NS: s.ns.NS}, set, d, batch.DeleteOptions{})
		if !errors.Is(err, batch.ErrForeignDependents) {
			t.Fatalf("%s: %v, want ErrForeignDependents", d, err)
		}
		for _, n := range []string{"theirmv", "theirvx", "farmv (netns " + other + ")"} {
			if !strings.Contains(err.Error(), n) {
				t.Errorf("%s: the refusal does not name %s: %v", d, n, err)
			}
		}
	}
	s.requirePresent(t, "a refused delete", append(rec.Links, theirs...)...)
	if !linkNames(t, other)["farmv"] {
		t.Error("farmv in the other namespace was deleted")
	}
}

// Item 1, continued: a macvlan on a devbulk veth's peer (deleting the veth
// deletes the peer), and a device enslaved to a devbulk bridge.
func TestForeignDependentsOnPeersAndPorts(t *testing.T) {
	needKind(t, "veth")
	needKind(t, "bridge")
	needKind(t, "macvlan")
	s := newScratch(t)
	_, veths := createRun(t, s, devices.Veth, 3)
	s.ipIn(t, "link", "add", "onpeer", "link", "dbk1p", "type", "macvlan")
	set, _ := veths.Set()
	_, _, err := batch.Delete(context.Background(), batch.Target{Conn: s.conn, NS: s.ns.NS}, set, batch.DeleteGroup, batch.DeleteOptions{})
	if !errors.Is(err, batch.ErrForeignDependents) || !strings.Contains(err.Error(), "onpeer") {
		t.Errorf("veth run with a macvlan on a peer: %v", err)
	}
	s.requirePresent(t, "a refused delete", append(veths.Links, s.byName(t, "onpeer"))...)
	// On a peer from another namespace, with the record as read from its
	// file (which keeps no peers): found in the namespace as it is.
	s.ipIn(t, "link", "del", "onpeer")
	other := namedNetns(t)
	s.ipIn(t, "link", "add", "farpeer", "link", "dbk2p", "netns", other, "type", "macvlan")
	b, err := json.Marshal(veths)
	var loaded runs.Record
	if err == nil {
		err = json.Unmarshal(b, &loaded)
	}
	if err != nil {
		t.Fatal(err)
	}
	set, _ = loaded.Set()
	_, _, err = batch.Delete(context.Background(), batch.Target{Conn: s.conn, NS: s.ns.NS}, set, batch.DeleteGroup, batch.DeleteOptions{})
	if !errors.Is(err, batch.ErrForeignDependents) || !strings.Contains(err.Error(), "farpeer (netns "+other+")") {
		t.Errorf("veth run read from its record, a macvlan in another namespace on a peer: %v", err)
	}
	if !linkNames(t, other)["farpeer"] {
		t.Error("farpeer in the other namespace was deleted")
	}

	s2 := newScratch(t)
	_, bridges := createRun(t, s2, devices.Bridge, 2)
	s2.ipIn(t, "link", "add", "port0", "type", "ifb")
	s2.ipIn(t, "link", "set", "port0", "master", "dbk0")
	set, _ = bridges.Set()
	_, _, err = batch.Delete(context.Background(), batch.Target{Conn: s2.conn, NS: s2.ns.NS}, set, batch.DeleteSerial, batch.DeleteOptions{})
	if !errors.Is(err, batch.ErrForeignDependents) || !strings.Contains(err.Error(), "port0") {
		t.Errorf("bridge run with a foreign port: %v", err)
	}
	if l := s2.byName(t, "port0"); l.Master == 0 {
		t.Error("port0 was released from the bridge")
	}
}

// Item 2: a device that takes the ifindex (and name) of one of devbulk's
// during a one-by-one delete is not deleted: every window is looked up
// again right before it is sent.
func TestIndexReusedDuringDeleteIsSpared(t *testing.T) {
	needKind(t, "ifb")
	s := newScratch(t)
	_, rec := createRun(t, s, devices.Ifb, 120)
	last := rec.Links[len(rec.Links)-1]
	side, err := nlbatch.Dial(s.ns.NS.Handle, nlbatch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer side.Close()
	// Once the delete is under way (its first device gone), someone
	// replaces the last device with their own, at the same ifindex and
	// under the same name: done from the progress hook, so it happens
	// before the delete reaches that device, however fast the machine.
	swapped := false
	swap := func(done, _ int) {
		if swapped || done == 0 {
			return
		}
		swapped = true
		if err := side.Do(context.Background(), nlbatch.DelLinkRequest(last.Index)); err != nil {
			t.Error(err)
		}
		namespace.Run(s.ns.NS.Handle, func() error {
			out, err := exec.Command("ip", "link", "add", last.Name, "index", strconv.Itoa(int(last.Index)), "type", "ifb").CombinedOutput()
			if err != nil {
				t.Errorf("ip link add index: %v %s", err, out)
			}
			return nil
		})
	}
	set, _ := rec.Set()
	p, _, err := batch.Delete(context.Background(), batch.Target{Conn: s.conn, NS: s.ns.NS}, set, batch.DeleteSerial, batch.DeleteOptions{Progress: swap})
	if !swapped {
		t.Fatal("the delete reported no progress")
	}
	s.requirePresent(t, "a delete that listed the ifindex before it was reused", last)
	if err != nil || p.Deleted != len(rec.Links)-1 {
		t.Errorf("delete: %v, deleted %d, want %d; left %v", err, p.Deleted, len(rec.Links)-1, p.Left)
	}
}

// writeRecord puts a hand-made record file in the state directory.
func writeRecord(t *testing.T, state, name string, rec any) {
	t.Helper()
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(state, name), b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// netnsInode is the inode of a named namespace.
func netnsInode(t *testing.T, name string) uint64 {
	var st unix.Stat_t
	if err := unix.Stat("/run/netns/"+name, &st); err != nil {
		t.Fatal(err)
	}
	return st.Ino
}

// deadOwner is an owner that cannot be alive: pid 1 with a start time it
// never had.
var deadOwner = map[string]any{"pid": 1, "start_ticks": 1 << 40, "boot_id": "x"}

// Items 3 and 15: hand-written or broken records claim nothing. delete says
// which and exits 1, touching no device; a truncated one does not stop
// others' runs; cleanup moves them aside.
func TestMalformedRecordsTouchNothing(t *testing.T) {
	needKind(t, "ifb")
	state := t.TempDir()
	ns := namedNetns(t)
	ino := netnsInode(t, ns)
	// The foreign devices sit in the groups the records claim, and are
	// named as the records say: only validation stands between them and a
	// delete.
	ip(t, "-n", ns, "link", "add", "foreign0", "type", "ifb")
	ip(t, "-n", ns, "link", "add", "x", "group", strconv.Itoa(0x10000001), "type", "ifb")
	ip(t, "-n", ns, "link", "add", "foreign1", "group", strconv.Itoa(0x10000009), "type", "ifb")
	idx := func(name string) int {
		var l []struct{ Ifindex int }
		json.Unmarshal([]byte(ip(t, "-j", "-n", ns, "link", "show", name)), &l)
		return l[0].Ifindex
	}
	link := func(name string) []map[string]any { return []map[string]any{{"Index": idx(name), "Name": name}} }
	base := func(group uint32, prefix string, links []map[string]any) map[string]any {
		return map[string]any{"group": group, "prefix": prefix, "kind": "ifb", "netns": ns, "netns_inode": ino,
			"links": links, "owner": deadOwner, "state": "deleting"}
	}
	writeRecord(t, state, "00000000.json", base(0, "foreign", link("foreign0")))
	writeRecord(t, state, "10000001.json", base(0x10000001, "", link("x")))
	writeRecord(t, state, "10000002.json", base(0x10000009, "foreign", link("foreign1")))
	os.WriteFile(filepath.Join(state, "10000003.json"), []byte(`{"group": 268435459, "pre`), 0o600)

	r := run(t, state, "create", "--netns", ns, "--kind", "ifb", "--count", "5")
	if r.code != 0 || strings.Count(r.stderr, "ignoring") != 4 {
		t.Fatalf("create beside broken records: exit %d, stderr %q", r.code, r.stderr)
	}
	r = run(t, state, "delete", "--netns", ns)
	if r.code != 1 || !strings.Contains(r.stdout, "deleted 5 of 5") || !strings.Contains(r.stderr, "4 malformed records that may be of this namespace ignored") {
		t.Errorf("delete: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	for _, want := range []string{"group 0 is every device's default", "empty name prefix", "belongs in 10000009.json", "10000003.json"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("delete does not say %q: %q", want, r.stderr)
		}
	}
	names := linkNames(t, ns)
	for _, n := range []string{"foreign0", "foreign1", "x"} {
		if !names[n] {
			t.Errorf("%s was deleted through a malformed record", n)
		}
	}
	r = run(t, state, "cleanup", "--all")
	if r.code != 0 || strings.Count(r.stdout, "malformed record") != 4 {
		t.Errorf("cleanup: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if recs := records(state); len(recs) != 0 {
		t.Errorf("records left after cleanup: %v", recs)
	}
	if names := linkNames(t, ns); len(names) != 4 {
		t.Errorf("cleanup touched devices: %v", names)
	}
}

// Item 3: a state directory others can write is refused before anything.
func TestUnsafeStateDirIsRefused(t *testing.T) {
	needKind(t, "ifb")
	state := t.TempDir()
	os.Chmod(state, 0o777)
	ns := namedNetns(t)
	r := run(t, state, "create", "--netns", ns, "--kind", "ifb", "--count", "5")
	if r.code != 2 || !strings.Contains(r.stderr, "unsafe directory") { // issue 22 item 12: a usage error
		t.Errorf("create with a world-writable state dir: exit %d, stderr %q", r.code, r.stderr)
	}
	if len(linkNames(t, ns)) != 1 {
		t.Error("devices were created")
	}
}

// Item 4: cleanup unmounts only the namespaces devbulk mounted (noted inode,
// nsfs, no symlink), never one a symlink planted in its folder points to.
func TestCleanupNeverUnmountsThroughSymlinks(t *testing.T) {
	needRoot(t)
	state := t.TempDir()
	victim := namedNetns(t)
	ino := netnsInode(t, victim)
	// A fake run directory of a dead devbulk, its entry a planted symlink.
	dir := filepath.Join(state, "netns", "1-1")
	os.MkdirAll(dir, 0o700)
	b, _ := json.Marshal(deadOwner)
	os.WriteFile(filepath.Join(dir, "owner"), b, 0o600)
	os.WriteFile(filepath.Join(dir, "mounts"), []byte(fmt.Sprintf("ns000000 %d\n", ino)), 0o600)
	os.Symlink("/run/netns/"+victim, filepath.Join(dir, "ns000000"))
	// And a run directory that is itself a symlink to /run/netns.
	os.Symlink("/run/netns", filepath.Join(state, "netns", "2-2"))
	r := run(t, state, "cleanup")
	if !strings.Contains(r.stderr, "is a symlink, not devbulk's mount: left alone") {
		t.Errorf("cleanup: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	var fs unix.Statfs_t
	if err := unix.Statfs("/run/netns/"+victim, &fs); err != nil || fs.Type != unix.NSFS_MAGIC {
		t.Errorf("the foreign namespace %s was unmounted (statfs %v, type %#x)", victim, err, fs.Type)
	}
}

// Item 6: a record whose namespace name is gone is looked for by inode, and
// what is found there is deleted only when the devices match too (ifindex,
// name and group). Here the inode leads to another namespace that holds a
// device of the recorded name and ifindex but not the run's group (a reused
// inode cannot be forced on demand; this is what one looks like): cleanup
// deletes nothing, says the record is stale, and names where it looked.
func TestReusedInodeLosesNothing(t *testing.T) {
	needKind(t, "ifb")
	state := t.TempDir()
	reuser := namedNetns(t)
	ip(t, "-n", reuser, "link", "add", "dbk0", "type", "ifb")
	var l []struct{ Ifindex int }
	json.Unmarshal([]byte(ip(t, "-j", "-n", reuser, "link", "show", "dbk0")), &l)
	writeRecord(t, state, "12345678.json", map[string]any{"group": 0x12345678, "prefix": "dbk", "kind": "ifb",
		"netns": "gone-" + reuser, "netns_inode": netnsInode(t, reuser),
		"links": []map[string]any{{"Index": l[0].Ifindex, "Name": "dbk0"}}, "owner": deadOwner, "state": "creating"})
	r := run(t, state, "cleanup")
	if r.code != 0 || !strings.Contains(r.stdout, "stale, none of its 1 device is left") || !strings.Contains(r.stdout, "/run/netns/"+reuser) {
		t.Errorf("cleanup: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if !linkNames(t, reuser)["dbk0"] {
		t.Error("dbk0 of the namespace that reused the inode was deleted")
	}
}

// Items 8 and 11: delete refuses a run whose creator still runs; kill -9
// during a serial delete leaves the record "deleting", and cleanup finishes.
func TestLiveCreatorRefusedAndKilledDeleteFinished(t *testing.T) {
	needKind(t, "ifb")
	state := t.TempDir()
	ns := namedNetns(t)
	cmd := startCreate(t, state, ns)
	r := run(t, state, "delete", "--netns", ns)
	if r.code != 1 || !strings.Contains(r.stderr, "still running") || !strings.Contains(r.stderr, fmt.Sprintf("pid %d", cmd.Process.Pid)) {
		t.Errorf("delete beside its live creator: exit %d, stderr %q", r.code, r.stderr)
	}
	if !linkNames(t, ns)["dbk100"] {
		t.Error("delete went ahead beside a live creator")
	}
	cmd.Process.Signal(syscall.SIGINT)
	cmd.Wait()

	del, _ := deleteUnderWay(t, state, ns, 400)
	del.Process.Kill()
	del.Wait()
	recs := records(state)
	if len(recs) != 1 {
		t.Fatalf("records after kill -9 of delete: %v", recs)
	}
	b, _ := os.ReadFile(recs[0])
	if !strings.Contains(string(b), `"state":"deleting"`) || len(linkNames(t, ns)) < 10 {
		t.Fatalf("killed delete left state %s and %d devices", b[len(b)-30:], len(linkNames(t, ns)))
	}
	r = run(t, state, "cleanup")
	if r.code != 0 || len(linkNames(t, ns)) != 1 {
		t.Errorf("cleanup after a killed delete: exit %d, %q %q; left %v", r.code, r.stdout, r.stderr, linkNames(t, ns))
	}
}

// Items 9, 10 and 13: a device renamed by someone else is reported as left
// (not deleted), its record kept; devices deleted by someone else are not
// counted as devbulk's; create names the devices it made.
func TestReportsCountWhatTheKernelConfirmed(t *testing.T) {
	needKind(t, "ifb")
	state := t.TempDir()
	ns := namedNetns(t)
	r := run(t, state, "create", "--netns", ns, "--kind", "ifb", "--count", "5", "--prefix", "rn")
	if r.code != 0 || !strings.Contains(r.stdout, "created 5 ifb links rn0..rn4") {
		t.Fatalf("create: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	ip(t, "-n", ns, "link", "set", "rn3", "name", "theirs3")
	r = run(t, state, "delete", "--netns", ns)
	if r.code != 1 || !strings.Contains(r.stdout, "deleted 4 of 5") || !strings.Contains(r.stdout, "renamed to theirs3 by someone else, not deleted") {
		t.Errorf("delete with a renamed device: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if !linkNames(t, ns)["theirs3"] {
		t.Error("the renamed device was deleted")
	}
	if recs := records(state); len(recs) != 1 {
		t.Errorf("the record of the device left was removed: %v", recs)
	}
	ip(t, "-n", ns, "link", "del", "theirs3")

	r = run(t, state, "create", "--netns", ns, "--kind", "ifb", "--count", "5", "--prefix", "gd", "--json")
	var doc struct{ Record runs.Record }
	json.Unmarshal([]byte(r.stdout), &doc)
	ip(t, "-n", ns, "link", "del", "group", strconv.Itoa(int(doc.Record.Group)))
	r = run(t, state, "delete", "--netns", ns, "--prefix", "gd")
	if r.code != 0 || !strings.Contains(r.stdout, "deleted none of 5") || !strings.Contains(r.stdout, "left: 5 devices (gd0 .. gd4): gone before devbulk deleted it") {
		t.Errorf("delete after someone else's group delete: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if recs := records(state); len(recs) != 1 {
		t.Errorf("records left: %v, want rn's only", recs)
	}
}

// Item 10: records whose namespace is gone are named by runs, once, and
// pruned by cleanup; create and delete, working beside them, say nothing
// of them (issue 44, item 9).
func TestStaleRecordsAreNamedAndPruned(t *testing.T) {
	needKind(t, "ifb")
	state := t.TempDir()
	gone := namedNetns(t)
	if r := run(t, state, "create", "--netns", gone, "--kind", "ifb", "--count", "3"); r.code != 0 {
		t.Fatalf("create: %d %s", r.code, r.stderr)
	}
	ip(t, "netns", "del", gone)
	ns := namedNetns(t)
	for _, args := range [][]string{{"create", "--netns", ns, "--kind", "ifb", "--count", "3", "--prefix", "ok"}, {"delete", "--netns", ns, "--prefix", "ok"}} {
		if r := run(t, state, args...); r.code != 0 || r.stderr != "" {
			t.Errorf("%s beside a stale record: exit %d, stderr %q", args[0], r.code, r.stderr)
		}
	}
	r := run(t, state, "runs")
	if r.code != 0 || !strings.Contains(r.stdout, gone+" (gone)") || !strings.Contains(r.stdout, "\n1 stale record(s): their namespace is gone") {
		t.Errorf("runs: exit %d, stdout %q", r.code, r.stdout)
	}
	r = run(t, state, "cleanup")
	if r.code != 0 || !strings.Contains(r.stdout, "stale") || !strings.Contains(r.stdout, gone) {
		t.Errorf("cleanup: exit %d, stdout %q", r.code, r.stdout)
	}
	if recs := records(state); len(recs) != 0 {
		t.Errorf("records after pruning: %v", recs)
	}
}

// Item 14: two creates in one namespace at once both succeed (each dump of
// the other's churn would be interrupted).
func TestConcurrentCreatesBothSucceed(t *testing.T) {
	needKind(t, "ifb")
	state := t.TempDir()
	ns := namedNetns(t)
	errs := make(chan string, 2)
	for _, prefix := range []string{"a", "b"} {
		go func() {
			cmd := exec.Command(binary(t), "create", "--netns", ns, "--kind", "ifb", "--count", "3000", "--prefix", prefix)
			cmd.Env = append(os.Environ(), "DEVBULK_STATE_DIR="+state)
			out, err := cmd.CombinedOutput()
			if err != nil {
				errs <- fmt.Sprintf("create %s: %v: %s", prefix, err, out)
				return
			}
			errs <- ""
		}()
	}
	for range 2 {
		if e := <-errs; e != "" {
			t.Error(e)
		}
	}
	if n := len(linkNames(t, ns)); n != 6001 {
		t.Errorf("%d devices, want 6000 and lo", n)
	}
	if r := run(t, state, "delete", "--netns", ns); r.code != 0 {
		t.Errorf("delete: %d %s", r.code, r.stderr)
	}
}

// childOf finds a process named comm whose parent is pid.
func childOf(pid int, comm string) int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, s := range stats {
		b, err := os.ReadFile(s)
		if err != nil {
			continue
		}
		i := strings.LastIndexByte(string(b), ')')
		f := strings.Fields(string(b[i+1:]))
		name := string(b[strings.IndexByte(string(b), '(')+1 : i])
		if len(f) > 1 && f[1] == strconv.Itoa(pid) && strings.HasPrefix(name, comm) {
			c, _ := strconv.Atoi(filepath.Base(filepath.Dir(s)))
			return c
		}
	}
	return 0
}

// killWithChild starts devbulk, waits until it has started a child named
// comm, kills devbulk with SIGKILL, and reaps the child (this test process
// is a subreaper, so the orphan comes to it): the child must have died of
// the SIGKILL devbulk's death sent it (PR_SET_PDEATHSIG), not of finishing
// its work on its own.
func killWithChild(t *testing.T, comm string, args ...string) {
	t.Helper()
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		t.Fatal(err)
	}
	defer unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
	cmd, _ := start(t, t.TempDir(), args...)
	var pid int
	waitFor(t, "devbulk starting "+comm, func() bool { pid = childOf(cmd.Process.Pid, comm); return pid != 0 })
	cmd.Process.Kill()
	cmd.Wait()
	var ws unix.WaitStatus
	if _, err := unix.Wait4(pid, &ws, 0, nil); err != nil {
		t.Fatalf("reaping %s: %v", comm, err)
	}
	if !ws.Signaled() || ws.Signal() != unix.SIGKILL {
		t.Errorf("%s (pid %d) outlived devbulk's kill -9 and ended on its own (status %#x)", comm, pid, ws)
	}
}

// Item 12: the programs devbulk runs die with it, even after kill -9: the
// `ip -batch` of --compare iproute2, and qemu (whose work directory cleanup
// then removes).
func TestChildrenDieWithDevbulk(t *testing.T) {
	needKind(t, "ifb")
	killWithChild(t, "ip", "bench", "--kind", "ifb", "--count", "20000", "--delete", "group", "--compare", "iproute2", "--quiet")
	if _, err := exec.LookPath("qemu-system-x86_64"); err != nil {
		t.Skip("qemu not installed: the VM half of this test needs it")
	}
	killWithChild(t, "qemu", "vm", "--accel", "tcg", "--", "kinds")
	r := run(t, t.TempDir(), "cleanup")
	if r.code != 0 || !strings.Contains(r.stdout, "vm work directory") {
		t.Errorf("cleanup after a killed devbulk vm: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

// Items 16 to 19: input errors exit 2 (or 4) with one clear line, before
// anything is made.
func TestSafetyBadInput(t *testing.T) {
	needKind(t, "ifb")
	state := t.TempDir()
	ns := namedNetns(t)
	suite := filepath.Join(t.TempDir(), "suite.json")
	os.WriteFile(suite, []byte(`{"name":"s","scenarios":[{"name":"a","bench":{"kind":"ifb","count":10,"delete":["group"]}}]} trailing`), 0o600)
	cwd, _ := os.Getwd()
	relSelf, _ := filepath.Rel(cwd, "/proc/self/ns/net")
	notNS := filepath.Join(t.TempDir(), "plain")
	os.WriteFile(notNS, nil, 0o600)
	cases := []struct {
		code int
		args []string
		want string
	}{
		{2, []string{"create", "--netns", relSelf, "--kind", "ifb", "--count", "3"}, "devbulk's own network namespace"},
		{2, []string{"create", "--netns", "..", "--kind", "ifb", "--count", "3"}, "not a namespace name"},
		{2, []string{"create", "--netns", notNS, "--kind", "ifb", "--count", "3"}, "not a namespace file"},
		{2, []string{"delete", "--netns", "/proc/self/ns/mnt"}, "not a network namespace"},
		{2, []string{"nosuchcommand"}, "unknown command \"nosuchcommand\""},
		{2, []string{"vm", "--kernel", "/nonexistent", "--", "kinds"}, "/nonexistent"},
		{2, []string{"vm", "--timeout", "-1s", "--", "kinds"}, "--timeout -1s out of range"},
		{2, []string{"bench", "--kind", "ifb", "--count", "10", "--svg", "/nonexistent/x.svg"}, "--svg"},
		{2, []string{"netns", "create", "--count", "10", "--series", "/nonexistent/x.csv"}, "--series"},
		{2, []string{"check", "--suite", suite}, "data after the suite"},
	}
	if !probe["dummy"] {
		cases = append(cases, struct {
			code int
			args []string
			want string
		}{4, []string{"netns", "churn", "--payload", "devices:dummy:2", "--workers", "1", "--per-worker", "2"}, "this kernel cannot create dummy: "})
	}
	for _, c := range cases {
		r := run(t, state, c.args...)
		if r.code != c.code || !strings.Contains(r.stderr, c.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 || r.stdout != "" {
			t.Errorf("%s: exit %d (want %d), stdout %q, stderr %q (want one line with %q)", strings.Join(c.args, " "), r.code, c.code, r.stdout, r.stderr, c.want)
		}
	}
	if len(linkNames(t, ns)) != 1 {
		t.Error("bad input created devices")
	}
	// Flags after arguments are read (the README's `plot F -o out.svg`).
	doc := filepath.Join(t.TempDir(), "bench.json")
	r := run(t, state, "bench", "--kind", "ifb", "--count", "5", "--delete", "group", "--json")
	os.WriteFile(doc, []byte(r.stdout), 0o600)
	out := filepath.Join(t.TempDir(), "out.svg")
	if r := run(t, state, "plot", doc, "-o", out); r.code != 0 {
		t.Errorf("plot F -o out.svg: exit %d: %s", r.code, r.stderr)
	}
	if b, _ := os.ReadFile(out); !strings.Contains(string(b), "<svg") {
		t.Error("plot F -o out.svg wrote no SVG")
	}
}

// Item 11, continued: a cleanup while a delete runs leaves that delete's run
// alone (the record is marked "deleting" by the deleting process), and the
// delete reports every device.
func TestCleanupBesideARunningDelete(t *testing.T) {
	needKind(t, "ifb")
	state := t.TempDir()
	ns := namedNetns(t)
	del, out := deleteUnderWay(t, state, ns, 300)
	r := run(t, state, "cleanup", "--all")
	if r.code != 0 || !strings.Contains(r.stdout, "nothing to clean up") {
		t.Errorf("cleanup beside a running delete: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if err := del.Wait(); err != nil || !strings.Contains(out.String(), "deleted 300 of 300") {
		t.Errorf("delete: %v, %q", err, out.String())
	}
	if recs := records(state); len(recs) != 0 || len(linkNames(t, ns)) != 1 {
		t.Errorf("left: records %v, devices %v", recs, linkNames(t, ns))
	}
}
