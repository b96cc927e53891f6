package tests

// Issue 22's ownership faults at the edges, cited as "item N": a device
// devbulk made stays in a record until it is gone, whatever was named or
// forced, and devbulk's reports of its own runs raise no false alarms.

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Item 1: delete --force beside a running create stops the creator first,
// then deletes everything it made: no device is left that no record holds.
func TestForceStopsTheCreatorFirst(t *testing.T) {
	needKind(t, "ifb")
	state := t.TempDir()
	ns := namedNetns(t)
	cmd := startCreate(t, state, ns)
	r := run(t, state, "delete", "--netns", ns, "--force")
	if r.code != 0 || !strings.Contains(r.stdout, "stopped (--force)") {
		t.Errorf("delete --force: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if err := cmd.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Errorf("the creator went on after delete --force (ended: %v)", err)
	}
	if names := linkNames(t, ns); len(names) != 1 {
		t.Errorf("devices left after delete --force: %d", len(names)-1)
	}
	if recs := records(state); len(recs) != 0 {
		t.Errorf("records left: %v", recs)
	}
}

// Item 2: a namespace is its inode: runs made in it under other names (as
// "current" inside `ip netns exec`, through a symlink) are found and deleted
// by its name, and are not called stale meanwhile.
func TestRunFoundByItsNamespaceHoweverNamed(t *testing.T) {
	needKind(t, "ifb")
	state := t.TempDir()
	ns := namedNetns(t)
	cmd := exec.Command("ip", "netns", "exec", ns, binary(t), "create", "--netns", "current", "--kind", "ifb", "--count", "3", "--prefix", "cur")
	cmd.Env = append(os.Environ(), "DEVBULK_STATE_DIR="+state)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("create inside ip netns exec: %v: %s", err, out)
	}
	alias := filepath.Join(t.TempDir(), "alias")
	if err := os.Symlink("/run/netns/"+ns, alias); err != nil {
		t.Fatal(err)
	}
	if r := run(t, state, "create", "--netns", alias, "--kind", "ifb", "--count", "3", "--prefix", "sym"); r.code != 0 || r.stderr != "" {
		t.Fatalf("create through a symlink: exit %d, stderr %q", r.code, r.stderr)
	}
	r := run(t, state, "delete", "--netns", ns)
	if r.code != 0 || strings.Count(r.stdout, "deleted 3 of 3") != 2 || strings.Contains(r.stderr, "stale") {
		t.Errorf("delete by name: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if names := linkNames(t, ns); len(names) != 1 {
		t.Errorf("left: %v", names)
	}
	if recs := records(state); len(recs) != 0 {
		t.Errorf("records left: %v", recs)
	}
}

// Item 3: two deletes of different runs in one namespace at once: the
// devices of the other run that go meanwhile are devbulk's, said in one
// line, never "not devbulk's".
func TestConcurrentDeletesOfTwoRunsRaiseNoAlarm(t *testing.T) {
	needKind(t, "ifb")
	state := t.TempDir()
	ns := namedNetns(t)
	for _, p := range []string{"a", "b"} {
		if r := run(t, state, "create", "--netns", ns, "--kind", "ifb", "--count", "1500", "--prefix", p); r.code != 0 {
			t.Fatalf("create %s: %s", p, r.stderr)
		}
	}
	serial, _ := start(t, state, "delete", "--netns", ns, "--prefix", "a", "--strategy", "serial")
	waitFor(t, "a5 deleted", func() bool { return !linkNames(t, ns)["a5"] })
	r := run(t, state, "delete", "--netns", ns, "--prefix", "b")
	if r.code != 0 || !strings.Contains(r.stdout, "deleted 1500 of 1500") || strings.Contains(r.stdout, "not devbulk's") ||
		!strings.Contains(r.stdout, "of other devbulk runs went meanwhile") {
		t.Errorf("delete of b beside a's: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	serial.Process.Kill()
	serial.Wait()
	run(t, state, "cleanup")
}

// Devices of another namespace's run are not this namespace's siblings: a
// foreign device named like one of them that goes during a delete here is
// still reported as not devbulk's.
func TestSiblingsAreOfThisNamespaceOnly(t *testing.T) {
	needKind(t, "ifb")
	state := t.TempDir()
	ns, other := namedNetns(t), namedNetns(t)
	if r := run(t, state, "create", "--netns", other, "--kind", "ifb", "--count", "3"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	ip(t, "-n", ns, "link", "add", "dbk1", "type", "ifb") // foreign, named as the other run's dbk1
	if r := run(t, state, "create", "--netns", ns, "--kind", "ifb", "--count", "150", "--prefix", "x"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	del, stdout := start(t, state, "delete", "--netns", ns, "--strategy", "serial")
	waitFor(t, "x5 deleted", func() bool { return !linkNames(t, ns)["x5"] })
	ip(t, "-n", ns, "link", "del", "dbk1")
	del.Wait()
	if out := stdout.String(); !strings.Contains(out, "not devbulk's, gone during the delete") || strings.Contains(out, "other devbulk runs") {
		t.Errorf("a foreign device gone during the delete: %q", out)
	}
}

// Item 4: a renamed device no longer blocks its run for ever: delete names
// the way out, and --forget-renamed deletes the rest, drops the renamed
// device from the record (naming it) and leaves it alone.
func TestForgetRenamed(t *testing.T) {
	needKind(t, "ifb")
	state := t.TempDir()
	ns := namedNetns(t)
	if r := run(t, state, "create", "--netns", ns, "--kind", "ifb", "--count", "5", "--prefix", "rn"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	ip(t, "-n", ns, "link", "set", "rn2", "name", "mine")
	r := run(t, state, "delete", "--netns", ns)
	if r.code != 1 || !strings.Contains(r.stdout, "--forget-renamed") {
		t.Errorf("delete with a renamed device: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	for _, args := range [][]string{{"delete", "--netns", ns}, {"cleanup", "--all"}} {
		if r := run(t, state, args...); r.code != 1 {
			t.Errorf("%v before --forget-renamed: exit %d (the record must stay)", args, r.code)
		}
	}
	r = run(t, state, "delete", "--netns", ns, "--forget-renamed")
	if r.code != 0 || !strings.Contains(r.stdout, "forgotten (--forget-renamed): rn2, renamed to mine") {
		t.Errorf("delete --forget-renamed: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if names := linkNames(t, ns); len(names) != 2 || !names["mine"] {
		t.Errorf("left: %v (want lo and mine)", names)
	}
	if recs := records(state); len(recs) != 0 {
		t.Errorf("records left: %v", recs)
	}
}

// Item 5: a malformed record of another namespace is a warning, not a
// failure of a good delete here; one that may be of this namespace fails it.
func TestMalformedRecordElsewhereOnlyWarns(t *testing.T) {
	needKind(t, "ifb")
	state := t.TempDir()
	ns, other := namedNetns(t), namedNetns(t)
	writeRecord(t, state, "00000000.json", map[string]any{"group": 0, "prefix": "x", "kind": "ifb", "netns": other,
		"netns_inode": netnsInode(t, other), "links": []any{}, "owner": deadOwner, "state": "complete"})
	if r := run(t, state, "create", "--netns", ns, "--kind", "ifb", "--count", "3"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	r := run(t, state, "delete", "--netns", ns)
	if r.code != 0 || !strings.Contains(r.stdout, "deleted 3 of 3") || !strings.Contains(r.stderr, "ignoring") {
		t.Errorf("delete beside another namespace's malformed record: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	writeRecord(t, state, "00000000.json", map[string]any{"group": 0, "prefix": "x", "kind": "ifb", "netns": ns,
		"netns_inode": netnsInode(t, ns), "links": []any{}, "owner": deadOwner, "state": "complete"})
	if r := run(t, state, "create", "--netns", ns, "--kind", "ifb", "--count", "3"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	if r := run(t, state, "delete", "--netns", ns); r.code != 1 || !strings.Contains(r.stderr, "may be of this namespace") {
		t.Errorf("delete beside this namespace's malformed record: exit %d, stderr %q", r.code, r.stderr)
	}
}

// Item 6 is in TestCleanupAfterKill.

// Item 7: a second vxlan run in a namespace gets free VNIs.
func TestSecondVxlanRunGetsFreeVNIs(t *testing.T) {
	needKind(t, "vxlan")
	state := t.TempDir()
	ns := namedNetns(t)
	for _, p := range []string{"va", "vb"} {
		if r := run(t, state, "create", "--netns", ns, "--kind", "vxlan", "--count", "20", "--prefix", p); r.code != 0 {
			t.Fatalf("create %s: exit %d, stderr %q", p, r.code, r.stderr)
		}
	}
	if r := run(t, state, "delete", "--netns", ns); r.code != 0 || strings.Count(r.stdout, "deleted 20 of 20") != 2 {
		t.Errorf("delete: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}
