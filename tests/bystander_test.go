package tests

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/devbulk/devbulk/bystander"

	"github.com/devbulk/devbulk/bench"
	"github.com/devbulk/devbulk/namespace"
)

func benchReport(t *testing.T, args ...string) *bench.Report {
	t.Helper()
	r := run(t, t.TempDir(), append(args, "--json")...)
	if r.code != 0 {
		t.Fatalf("devbulk %s: exit %d: %s", strings.Join(args, " "), r.code, r.stderr)
	}
	var rep bench.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	return &rep
}

// During a group delete of 20 000 ifb, which holds RTNL throughout, a link
// bystander (create and delete one device in another namespace) waits
// longer than its idle p99, within the delete.
func TestBystanderSeesTheGroupDelete(t *testing.T) {
	needKind(t, "ifb")
	r := benchReport(t, "bench", "--kind", "ifb", "--count", "20000", "--delete", "group", "--bystander", "link@20")
	idle, del := r.BystanderIdle, r.Runs[0].Delete.Bystander
	if idle == nil || del == nil || idle.Ops < 100 || del.Ops == 0 {
		t.Fatalf("idle %+v, delete %+v", idle, del)
	}
	if idle.Errors > 0 || del.Errors > 0 {
		t.Errorf("bystander errors: idle %q, delete %q", idle.FirstError, del.FirstError)
	}
	if del.LongestStall <= idle.P99 {
		t.Errorf("longest stall during the group delete %v, not over the idle p99 %v", time.Duration(del.LongestStall), time.Duration(idle.P99))
	}
	if del.StallBegan+del.LongestStall < 0 || del.StallBegan > r.Runs[0].Delete.WallNS {
		t.Errorf("the stall began %v into a delete of %v", time.Duration(del.StallBegan), time.Duration(r.Runs[0].Delete.WallNS))
	}
}

// A getlink bystander runs at its rate, open loop: its idle baseline (two
// seconds) holds every operation due, late or not. 25/s, not more: a
// prober whose operations come back more than an interval late is refused
// as saturated, and on a loaded machine (CI beside other tests, a kernel
// build) a getlink at 150/s (6.7 ms apart) once was (p50 34 ms); at 25/s
// it would take 40 ms of scheduling delay.
func TestBystanderRunsAtItsRate(t *testing.T) {
	needKind(t, "ifb")
	r := benchReport(t, "bench", "--kind", "ifb", "--count", "100", "--delete", "group", "--bystander", "getlink@25")
	if idle := r.BystanderIdle; idle == nil || idle.Ops < 99 || idle.Ops > 101 || idle.Rate != 25 {
		t.Errorf("idle baseline %+v: want 100 operations (the baseline holds at least 100: 4 s at 25/s)", idle)
	}
}

// The bystander's namespaces are held by devbulk's descriptors alone: no
// bind mount or other holder keeps them after Ctrl-C (exit 130, nothing
// printed) or a kill -9.
func TestBystanderNamespacesGoWithDevbulk(t *testing.T) {
	needKind(t, "ifb")
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd, stdout := start(t, t.TempDir(), "bench", "--kind", "ifb", "--count", "1000", "--delete", "serial", "--bystander", "veth")
			var held map[uint64]bool
			waitFor(t, "three namespaces (the bystander's two, the cycle's)", func() bool {
				held = netnsOf(cmd.Process.Pid)
				return len(held) >= 3
			})
			cmd.Process.Signal(sig)
			cmd.Wait()
			if code := cmd.ProcessState.ExitCode(); sig == syscall.SIGINT && (code != 130 || stdout.Len() > 0) {
				t.Errorf("exit %d, printed %q: want 130 and nothing", code, stdout.String())
			}
			for ino := range namespace.Discover() {
				if held[ino] {
					t.Errorf("netns %d of the stopped devbulk is still held", ino)
				}
			}
		})
	}
}

// create, move and delete --bystander say what the prober waited during
// the command; the JSON holds it and the idle baseline.
func TestBystanderBesideCommands(t *testing.T) {
	needKind(t, "ifb")
	state, from, to := t.TempDir(), namedNetns(t), namedNetns(t)
	for _, args := range [][]string{
		{"create", "--netns", from, "--kind", "ifb", "--count", "200", "--bystander", "getlink@100"},
		{"move", "--netns", from, "--to", to, "--bystander", "getlink@100"},
		{"delete", "--netns", to, "--bystander", "getlink@100", "--json"},
	} {
		r := run(t, state, args...)
		if r.code != 0 {
			t.Fatalf("%v: exit %d: %s", args, r.code, r.stderr)
		}
		if args[0] != "delete" && !strings.Contains(r.stdout, "bystander getlink@100/s in a namespace of its own, during the "+args[0]) {
			t.Errorf("%v said %q", args, r.stdout)
		}
		if args[0] == "delete" {
			var doc struct {
				Delete []bench.Phase    `json:"delete"`
				Idle   *bystander.Stats `json:"bystander_idle"`
			}
			if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || doc.Idle == nil || doc.Idle.Ops < 200 || len(doc.Delete) != 1 || doc.Delete[0].Bystander == nil {
				t.Errorf("delete --json: %v: %s", err, r.stdout)
			}
		}
	}
}

// netnsOf is the inodes of the network namespaces process pid holds by
// descriptor, its own excepted.
func netnsOf(pid int) map[uint64]bool {
	own, _ := os.Readlink(fmt.Sprintf("/proc/%d/ns/net", pid))
	out := map[uint64]bool{}
	fds, _ := filepath.Glob(fmt.Sprintf("/proc/%d/fd/*", pid))
	for _, fd := range fds {
		l, err := os.Readlink(fd)
		var ino uint64
		if err == nil && l != own {
			if _, err := fmt.Sscanf(l, "net:[%d]", &ino); err == nil {
				out[ino] = true
			}
		}
	}
	return out
}

// A bystander asked for more than it can do even idle (a link operation
// takes RCU grace periods: some 16 ms) is refused after its baseline: its
// figures would be its own backlog. Exit 2, nothing printed.
func TestSaturatedBystanderSaysSo(t *testing.T) {
	needKind(t, "ifb")
	r := run(t, t.TempDir(), "bench", "--kind", "ifb", "--count", "100", "--delete", "group", "--bystander", "link@1000")
	if r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, "the link bystander cannot keep 1000/s even idle") {
		t.Errorf("exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
}
