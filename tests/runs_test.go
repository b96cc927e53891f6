package tests

// Issue 40, item 2: `devbulk runs` lists the records: each run's prefix,
// kind, devices, group, namespaces (both sides of a move), state, whether
// its devbulk still runs, and its age.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

type listed struct {
	Prefix, Kind string
	Group        uint32
	Devices      int
	Netns        struct {
		Name    string
		Devices int
		Gone    bool
	}
	To *struct {
		Name    string
		Devices int
	}
	State   string
	Running bool
	Created time.Time
}

func listRuns(t *testing.T, state string) []listed {
	t.Helper()
	r := run(t, state, "runs", "--json")
	var doc struct{ Runs []listed }
	if err := json.Unmarshal([]byte(r.stdout), &doc); r.code != 0 || err != nil {
		t.Fatalf("runs --json: exit %d, %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	return doc.Runs
}

func TestRunsCommand(t *testing.T) {
	needKind(t, "ifb")
	state, a, b := filepath.Join(t.TempDir(), "state"), namedNetns(t), namedNetns(t)
	if r := run(t, state, "runs"); r.code != 0 || r.stdout != "no devbulk runs recorded (in "+state+")\n" {
		t.Fatalf("runs before any: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	if r := run(t, state, "delete", "--netns", a); r.code != 0 || !strings.Contains(r.stderr, "no devbulk runs recorded in netns "+a) {
		t.Errorf("delete before any run: exit %d, %q", r.code, r.stderr)
	}
	if _, err := os.Lstat(state); err == nil {
		t.Errorf("a listing or a delete made the state directory")
	}
	before := time.Now().Add(-time.Second)
	for _, args := range [][]string{{"--count", "40", "--prefix", "aa"}, {"--count", "7", "--prefix", "bb"}} {
		if r := run(t, state, append([]string{"create", "--netns", a, "--kind", "ifb"}, args...)...); r.code != 0 {
			t.Fatalf("create: exit %d: %s", r.code, r.stderr)
		}
	}
	// Ctrl-C during a serial move of aa: the run stays on both sides.
	cmd, _ := start(t, state, "move", "--netns", a, "--to", b, "--strategy", "serial", "--prefix", "aa")
	waitFor(t, "aa3 moved", func() bool { return linkNames(t, b)["aa3"] })
	cmd.Process.Signal(syscall.SIGINT)
	cmd.Wait()
	moved := len(linkNames(t, b)) - 1 // all but lo
	got := listRuns(t, state)
	if len(got) != 2 {
		t.Fatalf("runs: %+v, want two", got)
	}
	for _, l := range got {
		if l.Kind != "ifb" || l.State != "complete" || l.Running || l.Group == 0 || l.Created.Before(before) || l.Created.After(time.Now()) || l.Netns.Name != a {
			t.Errorf("run %+v: want a complete ifb run in %s, created now, its devbulk exited", l, a)
		}
		switch l.Prefix {
		case "aa":
			if l.Devices != 40 || l.To == nil || l.To.Name != b || l.To.Devices != moved || l.Netns.Devices != 40-moved {
				t.Errorf("the interrupted move: %+v, want 40 devices on %s and %s", l, a, b)
			}
		case "bb":
			if l.Devices != 7 || l.To != nil || l.Netns.Devices != 7 {
				t.Errorf("bb: %+v, want 7 in %s", l, a)
			}
		}
	}
	if err := os.WriteFile(filepath.Join(state, "00000001.json"), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := run(t, state, "runs")
	if r.code != 0 || !strings.Contains(r.stdout, a+" (") || !strings.Contains(r.stdout, " + "+b+" (") ||
		!strings.Contains(r.stdout, "PREFIX  KIND") || !strings.Contains(r.stderr, "00000001.json") {
		t.Errorf("runs: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// A devbulk killed while it deletes leaves its run "deleting": runs says
// its devbulk was killed and that cleanup finishes it; one still deleting
// is "running".
func TestRunsCommandNamesKilledRuns(t *testing.T) {
	needKind(t, "ifb")
	state, ns := t.TempDir(), namedNetns(t)
	cmd, _ := deleteUnderWay(t, state, ns, 300)
	if l := listRuns(t, state); len(l) != 1 || l[0].State != "deleting" || !l[0].Running {
		t.Errorf("during a delete: %+v, want one run deleting, its devbulk running", l)
	}
	cmd.Process.Kill()
	cmd.Wait()
	r := run(t, state, "runs")
	if !strings.Contains(r.stdout, "deleting (killed)") || !strings.Contains(r.stdout, "`devbulk cleanup` finishes them") {
		t.Errorf("after kill -9: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if l := listRuns(t, state); len(l) != 1 || l[0].Running {
		t.Errorf("after kill -9: %+v", l)
	}
}
