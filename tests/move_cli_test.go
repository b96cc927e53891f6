package tests

// Issue 26, item 2: `devbulk move` moves a recorded run's links into
// another namespace and the record follows them, whatever happens to the
// move: delete and cleanup find the devices where they are.

import (
	"encoding/json"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// recorded is the one record in state: its state, where its links are,
// and how many on each side.
type recorded struct {
	State, Netns, To string
	Here, There      int
}

func recordIn(t *testing.T, state string) recorded {
	t.Helper()
	recs := records(state)
	if len(recs) != 1 {
		t.Fatalf("records: %v, want one", recs)
	}
	b, err := os.ReadFile(recs[0])
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		State   string                  `json:"state"`
		Netns   string                  `json:"netns"`
		Links   [][]any                 `json:"links"`
		To      *struct{ Netns string } `json:"to"`
		ToLinks [][]any                 `json:"to_links"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	out := recorded{State: r.State, Netns: r.Netns, Here: count(r.Links), There: count(r.ToLinks)}
	if r.To != nil {
		out.To = r.To.Netns
	}
	return out
}

// count is the number of links a record's link runs hold.
func count(runs [][]any) int {
	n := 0
	for _, r := range runs {
		if len(r) >= 3 {
			n += int(r[2].(float64))
		} else {
			n++
		}
	}
	return n
}

// ours is the number of the run's devices (dbk<n>) in ns.
func ours(t *testing.T, ns string) int {
	t.Helper()
	n := 0
	for name := range linkNames(t, ns) {
		if rest, ok := strings.CutPrefix(name, "dbk"); ok {
			if _, err := strconv.Atoi(rest); err == nil {
				n++
			}
		}
	}
	return n
}

// 300 ifb moved by each strategy all arrive, a device of others beside
// them stays, and the record follows: delete (or cleanup --all) there
// takes them all and leaves no record.
func TestMoveCommandEveryStrategy(t *testing.T) {
	needKind(t, "ifb")
	besideOthers(t)
	for i, m := range []string{"serial", "pipelined", "parallel", "group"} {
		t.Run(m, func(t *testing.T) {
			state, a, b := t.TempDir(), namedNetns(t), namedNetns(t)
			if r := run(t, state, "create", "--netns", a, "--kind", "ifb", "--count", "300"); r.code != 0 {
				t.Fatalf("create: exit %d: %s", r.code, r.stderr)
			}
			ip(t, "-n", a, "link", "add", "stranger", "type", "ifb")
			r := run(t, state, "move", "--netns", a, "--to", b, "--strategy", m)
			if r.code != 0 || !strings.Contains(r.stdout, "moved 300 of 300 ifb links dbk* into netns "+b+" by "+m) {
				t.Fatalf("move: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			if got := recordIn(t, state); got != (recorded{State: "complete", Netns: b, Here: 300}) {
				t.Errorf("record after the move: %+v, want all 300 in %s", got, b)
			}
			if ours(t, a) != 0 || ours(t, b) != 300 || !linkNames(t, a)["stranger"] {
				t.Fatalf("after the move: %d in %s, %d in %s, stranger kept: %v", ours(t, a), a, ours(t, b), b, linkNames(t, a)["stranger"])
			}
			then := []string{"delete", "--netns", b}
			if i%2 == 1 {
				then = []string{"cleanup", "--all"}
			}
			if r := run(t, state, then...); r.code != 0 || ours(t, b) != 0 || len(records(state)) != 0 {
				t.Errorf("%s after the move: exit %d, %d left in %s, records %v\n%s%s", then[0], r.code, ours(t, b), b, records(state), r.stdout, r.stderr)
			}
		})
	}
}

// A device of others moved into the run's group: a move by group refuses
// and moves nothing, the record as it was; a serial move takes the run's
// devices and leaves it.
func TestMoveCommandSparesAStrangerInTheGroup(t *testing.T) {
	needKind(t, "ifb")
	state, a, b := t.TempDir(), namedNetns(t), namedNetns(t)
	if r := run(t, state, "create", "--netns", a, "--kind", "ifb", "--count", "20"); r.code != 0 {
		t.Fatalf("create: exit %d: %s", r.code, r.stderr)
	}
	fields := strings.Fields(ip(t, "-n", a, "-o", "link", "show", "dbk0"))
	g := fields[slices.Index(fields, "group")+1]
	ip(t, "-n", a, "link", "add", "stranger", "group", g, "type", "ifb")
	r := run(t, state, "move", "--netns", a, "--to", b, "--strategy", "group")
	if r.code == 0 || !strings.Contains(r.stderr, "refusing to move by group") || ours(t, b) != 0 {
		t.Fatalf("move by group with a stranger in the group: exit %d, %d moved\n%s%s", r.code, ours(t, b), r.stdout, r.stderr)
	}
	if got := recordIn(t, state); got != (recorded{State: "complete", Netns: a, Here: 20}) {
		t.Errorf("record after a refused move: %+v", got)
	}
	r = run(t, state, "move", "--netns", a, "--to", b, "--strategy", "serial")
	if r.code != 0 || ours(t, b) != 20 || !linkNames(t, a)["stranger"] || linkNames(t, b)["stranger"] {
		t.Errorf("serial move: exit %d, %d moved, stranger in %s: %v\n%s%s", r.code, ours(t, b), a, linkNames(t, a)["stranger"], r.stdout, r.stderr)
	}
}

// kill -9 during a serial move leaves the links on both sides and the
// record "moving": cleanup finds them on both and leaves nothing.
func TestMoveCommandKilledThenCleanup(t *testing.T) {
	needKind(t, "ifb")
	state, a, b := t.TempDir(), namedNetns(t), namedNetns(t)
	stopMove(t, state, a, b, syscall.SIGKILL)
	if got := recordIn(t, state); got.State != "moving" || got.To != b {
		t.Errorf("record of a killed move: %+v, want moving to %s", got, b)
	}
	if ours(t, a) == 0 || ours(t, b) == 0 {
		t.Fatalf("the kill came too late: %d in %s, %d in %s", ours(t, a), a, ours(t, b), b)
	}
	r := run(t, state, "cleanup")
	if r.code != 0 || ours(t, a) != 0 || ours(t, b) != 0 || len(records(state)) != 0 {
		t.Errorf("cleanup: exit %d, left %d in %s and %d in %s, records %v\n%s%s", r.code, ours(t, a), a, ours(t, b), b, records(state), r.stdout, r.stderr)
	}
}

// A move started again after a kill -9 finds where the killed one left
// the links (the record still says "moving") and moves the rest.
func TestMoveCommandKilledThenMovedAgain(t *testing.T) {
	needKind(t, "ifb")
	state, a, b := t.TempDir(), namedNetns(t), namedNetns(t)
	stopMove(t, state, a, b, syscall.SIGKILL)
	if got := recordIn(t, state); got.State != "moving" || ours(t, a) == 0 || ours(t, b) == 0 {
		t.Fatalf("killed move: record %+v, %d in %s, %d in %s", got, ours(t, a), a, ours(t, b), b)
	}
	r := run(t, state, "move", "--netns", a, "--to", b)
	if r.code != 0 || ours(t, a) != 0 || ours(t, b) != 300 || recordIn(t, state) != (recorded{State: "complete", Netns: b, Here: 300}) {
		t.Errorf("move again: exit %d, %d left in %s, %d in %s, record %+v\n%s%s", r.code, ours(t, a), a, ours(t, b), b, recordIn(t, state), r.stdout, r.stderr)
	}
}

// Ctrl-C during a serial move leaves the record on both sides: delete
// there takes the moved ones and the record stays with the rest, which a
// second move takes over.
func TestMoveCommandInterruptedKeepsBothSides(t *testing.T) {
	needKind(t, "ifb")
	state, a, b := t.TempDir(), namedNetns(t), namedNetns(t)
	code, out := stopMove(t, state, a, b, syscall.SIGINT)
	here, there := ours(t, a), ours(t, b)
	got := recordIn(t, state)
	if code != 130 || !strings.Contains(out, "interrupted: moved") || here == 0 ||
		got != (recorded{State: "complete", Netns: a, To: b, Here: here, There: there}) {
		t.Fatalf("interrupted move: exit %d, %d in %s, %d in %s, record %+v\n%s", code, here, a, there, b, got, out)
	}
	if r := run(t, state, "delete", "--netns", b); r.code != 0 || ours(t, b) != 0 || recordIn(t, state) != (recorded{State: "complete", Netns: a, Here: here}) {
		t.Fatalf("delete of the moved side: exit %d, %d left, record %+v\n%s%s", r.code, ours(t, b), recordIn(t, state), r.stdout, r.stderr)
	}
	r := run(t, state, "move", "--netns", a, "--to", b, "--strategy", "group")
	if r.code != 0 || ours(t, b) != here || recordIn(t, state) != (recorded{State: "complete", Netns: b, Here: here}) {
		t.Errorf("the second move: exit %d, %d in %s\n%s%s", r.code, ours(t, b), b, r.stdout, r.stderr)
	}
}

// stopMove creates a run of 300 ifb in a, starts a serial move of it into
// b and, once dbk20 has arrived there, sends the move sig; it returns the
// move's exit code and output.
func stopMove(t *testing.T, state, a, b string, sig syscall.Signal) (int, string) {
	t.Helper()
	if r := run(t, state, "create", "--netns", a, "--kind", "ifb", "--count", "300"); r.code != 0 {
		t.Fatalf("create: exit %d: %s", r.code, r.stderr)
	}
	cmd, out := start(t, state, "move", "--netns", a, "--to", b, "--strategy", "serial")
	waitFor(t, "dbk20 moved", func() bool { return linkNames(t, b)["dbk20"] })
	cmd.Process.Signal(sig)
	cmd.Wait()
	return cmd.ProcessState.ExitCode(), out.String()
}

// Bad input exits 2 or 4 with one line, and nothing moves.
func TestMoveCommandBadInput(t *testing.T) {
	needKind(t, "ifb")
	needKind(t, "bridge")
	state, a, b := t.TempDir(), namedNetns(t), namedNetns(t)
	for _, args := range [][]string{{"--kind", "ifb", "--count", "5"}, {"--kind", "bridge", "--count", "2", "--prefix", "br"}} {
		if r := run(t, state, append([]string{"create", "--netns", a}, args...)...); r.code != 0 {
			t.Fatalf("create: exit %d: %s", r.code, r.stderr)
		}
	}
	for _, c := range []struct {
		args []string
		code int
		text string
	}{
		{[]string{"--to", a}, 2, "is the namespace --netns"},
		{[]string{"--to", "devbulk-no-such-ns"}, 2, "not found"},
		{nil, 2, "move needs --to"},
		{[]string{"--to", b, "--strategy", "bogus"}, 2, "valid: serial, pipelined, parallel, group"},
		{[]string{"--to", b, "--workers", "3"}, 2, "--workers"},
		{[]string{"--to", b}, 4, "bridge links cannot leave their namespace"},
		{[]string{"--to", b, "--prefix", "br"}, 4, "NETIF_F_NETNS_LOCAL"},
	} {
		r := run(t, state, append([]string{"move", "--netns", a}, c.args...)...)
		if r.code != c.code || !strings.Contains(r.stderr, c.text) || strings.Count(r.stderr, "\n") != 1 || len(linkNames(t, b)) != 1 {
			t.Errorf("move %v: exit %d, stderr %q, %d devices in %s; want exit %d, %q", c.args, r.code, r.stderr, len(linkNames(t, b)), b, c.code, c.text)
		}
	}
}

// A run that cleanup began deleting after a killed move is "abandoned" in
// its record: when that cleanup is itself cut short (simulated here by
// marking the record of an interrupted move), the next plain cleanup
// finishes it on both sides, where an ordinary complete run is left alone.
func TestCleanupFinishesAnAbandonedMove(t *testing.T) {
	needKind(t, "ifb")
	state, a, b := t.TempDir(), namedNetns(t), namedNetns(t)
	code, out := stopMove(t, state, a, b, syscall.SIGINT)
	here, there := ours(t, a), ours(t, b)
	if code != 130 || here == 0 || there == 0 {
		t.Fatalf("interrupted move: exit %d, %d in %s, %d in %s\n%s", code, here, a, there, b, out)
	}
	if r := run(t, state, "cleanup"); r.code != 0 || ours(t, a) != here || ours(t, b) != there {
		t.Fatalf("cleanup of a complete run: exit %d, %d of %d left in %s, %d of %d in %s\n%s%s",
			r.code, ours(t, a), here, a, ours(t, b), there, b, r.stdout, r.stderr)
	}
	file := records(state)[0]
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var rec map[string]any
	if err := json.Unmarshal(raw, &rec); err != nil {
		t.Fatal(err)
	}
	rec["abandoned"] = true
	if raw, err = json.Marshal(rec); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	r := run(t, state, "cleanup")
	if r.code != 0 || ours(t, a) != 0 || ours(t, b) != 0 || len(records(state)) != 0 || !strings.Contains(r.stdout, "(abandoned by a killed move)") {
		t.Errorf("cleanup of an abandoned run: exit %d, left %d in %s and %d in %s, records %v\n%s%s",
			r.code, ours(t, a), a, ours(t, b), b, records(state), r.stdout, r.stderr)
	}
}

// Devices of others that only share the run's prefix (mm70001 beside
// mm0..mm59) do not stop a move, on either side, and stay where they are;
// a device of others named exactly as one of the run's links does, exit 2,
// naming it, before anything moves (issue 40, item 3).
func TestMoveCommandNeighboursSharingThePrefix(t *testing.T) {
	needKind(t, "ifb")
	state, a, b := t.TempDir(), namedNetns(t), namedNetns(t)
	if r := run(t, state, "create", "--netns", a, "--kind", "ifb", "--count", "60", "--prefix", "mm"); r.code != 0 {
		t.Fatalf("create: exit %d: %s", r.code, r.stderr)
	}
	for i := 70001; i <= 70003; i++ {
		ip(t, "-n", a, "link", "add", "mm"+strconv.Itoa(i), "type", "ifb")
		ip(t, "-n", b, "link", "add", "mm"+strconv.Itoa(i+10), "type", "ifb")
	}
	ip(t, "-n", b, "link", "add", "mm7", "type", "ifb")
	r := run(t, state, "move", "--netns", a, "--to", b)
	if r.code != 2 || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, "(mm7)") || len(linkNames(t, b)) != 5 {
		t.Fatalf("move onto a device named as a link of the run: exit %d, %d devices in %s\n%s%s", r.code, len(linkNames(t, b)), b, r.stdout, r.stderr)
	}
	ip(t, "-n", b, "link", "del", "mm7")
	r = run(t, state, "move", "--netns", a, "--to", b)
	if r.code != 0 || !strings.Contains(r.stdout, "moved 60 of 60 ifb links mm* into netns "+b) {
		t.Fatalf("move beside neighbours sharing the prefix: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for ns, want := range map[string][]string{a: {"mm70001", "mm70002", "mm70003"}, b: {"mm70011", "mm70012", "mm70013", "mm0", "mm59"}} {
		for _, name := range want {
			if !linkNames(t, ns)[name] {
				t.Errorf("%s is not in %s after the move", name, ns)
			}
		}
	}
	if got := recordIn(t, state); got != (recorded{State: "complete", Netns: b, Here: 60}) {
		t.Errorf("record after the move: %+v, want all 60 in %s", got, b)
	}
	if r := run(t, state, "delete", "--netns", b); r.code != 0 || len(linkNames(t, b)) != 4 {
		t.Errorf("delete after the move: exit %d, left %v\n%s", r.code, linkNames(t, b), r.stderr)
	}
}

// After a kill -9 during a move, a delete in the destination takes the
// links that arrived there and the record keeps the rest, which a delete
// in the first namespace takes: nothing is left unrecorded on either side
// (a review found a delete from the destination that dropped them).
func TestMoveCommandKilledThenDeletedFromBothSides(t *testing.T) {
	needKind(t, "ifb")
	state, a, b := t.TempDir(), namedNetns(t), namedNetns(t)
	stopMove(t, state, a, b, syscall.SIGKILL)
	there := ours(t, b)
	if r := run(t, state, "delete", "--netns", b); r.code != 0 || ours(t, b) != 0 || !strings.Contains(r.stdout, "deleted "+strconv.Itoa(there)+" of "+strconv.Itoa(there)) {
		t.Fatalf("delete in the destination: exit %d, %d left of %d\n%s%s", r.code, ours(t, b), there, r.stdout, r.stderr)
	}
	if got := recordIn(t, state); got.Netns != a || got.Here != 300-there || got.There != 0 {
		t.Errorf("record after deleting the moved part: %+v, want %d in %s", got, 300-there, a)
	}
	if r := run(t, state, "delete", "--netns", a); r.code != 0 || ours(t, a) != 0 || len(records(state)) != 0 {
		t.Errorf("delete of the rest: exit %d, %d left, records %v\n%s%s", r.code, ours(t, a), records(state), r.stdout, r.stderr)
	}
}

// peers is the number of the run's veth peers (dbk<n>p) in ns.
func peers(t *testing.T, ns string) int {
	t.Helper()
	n := 0
	for name := range linkNames(t, ns) {
		if rest, ok := strings.CutSuffix(name, "p"); ok && strings.HasPrefix(rest, "dbk") {
			if _, err := strconv.Atoi(rest[3:]); err == nil {
				n++
			}
		}
	}
	return n
}

// A veth moves without its peer, as `ip link set X netns B` does: the peer
// stays where it was made and is still the run's. Every path finishes the
// run wherever its ends are (issue 44, item 1): delete in the destination,
// cleanup --all, a second move on to a third namespace and one back, and a
// move killed half way; a device of others on a peer left behind stops
// the delete, naming it.
func TestMoveVethLeavesItsPeer(t *testing.T) {
	needKind(t, "veth")
	needKind(t, "macvlan")
	moved := func(t *testing.T, state, from, to string, n int) {
		t.Helper()
		r := run(t, state, "move", "--netns", from, "--to", to)
		if r.code != 0 || ours(t, to) != n {
			t.Fatalf("move %s → %s: exit %d, %d in %s\n%s%s", from, to, r.code, ours(t, to), to, r.stdout, r.stderr)
		}
	}
	made := func(t *testing.T, state, ns string, n int) {
		t.Helper()
		if r := run(t, state, "create", "--netns", ns, "--kind", "veth", "--count", strconv.Itoa(n)); r.code != 0 {
			t.Fatalf("create: exit %d: %s", r.code, r.stderr)
		}
	}
	gone := func(t *testing.T, state string, spaces ...string) {
		t.Helper()
		for _, ns := range spaces {
			if ours(t, ns)+peers(t, ns) != 0 {
				t.Errorf("left in %s: %d veths, %d peers", ns, ours(t, ns), peers(t, ns))
			}
		}
		if len(records(state)) != 0 {
			t.Errorf("records left: %v", records(state))
		}
	}
	for _, then := range [][]string{{"delete", "--netns", "B"}, {"cleanup", "--all"}} {
		t.Run(then[0], func(t *testing.T) {
			state, a, b := t.TempDir(), namedNetns(t), namedNetns(t)
			made(t, state, a, 10)
			moved(t, state, a, b, 10)
			if peers(t, a) != 10 || peers(t, b) != 0 {
				t.Fatalf("peers after the move: %d in %s, %d in %s; want all 10 left in %s", peers(t, a), a, peers(t, b), b, a)
			}
			args := slices.Clone(then)
			if i := slices.Index(args, "B"); i >= 0 {
				args[i] = b
			}
			if r := run(t, state, args...); r.code != 0 {
				t.Fatalf("%v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
			}
			gone(t, state, a, b)
		})
	}
	t.Run("moved-on-and-back", func(t *testing.T) {
		state, a, b, c := t.TempDir(), namedNetns(t), namedNetns(t), namedNetns(t)
		made(t, state, a, 10)
		moved(t, state, a, b, 10)
		moved(t, state, b, c, 10)
		moved(t, state, c, a, 10)
		if r := run(t, state, "delete", "--netns", a); r.code != 0 {
			t.Fatalf("delete: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		gone(t, state, a, b, c)
	})
	t.Run("stranger-on-a-peer", func(t *testing.T) {
		state, a, b := t.TempDir(), namedNetns(t), namedNetns(t)
		made(t, state, a, 5)
		moved(t, state, a, b, 5)
		ip(t, "-n", a, "link", "add", "stranger", "link", "dbk3p", "type", "macvlan")
		r := run(t, state, "delete", "--netns", b)
		if r.code == 0 || !strings.Contains(r.stderr, "stranger") || ours(t, b) != 5 || !linkNames(t, a)["stranger"] {
			t.Fatalf("delete with a stranger on a peer left behind: exit %d, %d left\n%s%s", r.code, ours(t, b), r.stdout, r.stderr)
		}
		ip(t, "-n", a, "link", "del", "stranger")
		if r := run(t, state, "delete", "--netns", b); r.code != 0 {
			t.Fatalf("delete: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		gone(t, state, a, b)
	})
	t.Run("killed-half-way", func(t *testing.T) {
		state, a, b := t.TempDir(), namedNetns(t), namedNetns(t)
		made(t, state, a, 300)
		cmd, _ := start(t, state, "move", "--netns", a, "--to", b, "--strategy", "serial")
		waitFor(t, "dbk20 moved", func() bool { return linkNames(t, b)["dbk20"] })
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		if ours(t, a) == 0 || ours(t, b) == 0 {
			t.Fatalf("the kill came too late: %d in %s, %d in %s", ours(t, a), a, ours(t, b), b)
		}
		moved(t, state, a, b, 300) // the second move takes the rest
		if r := run(t, state, "cleanup", "--all"); r.code != 0 {
			t.Fatalf("cleanup: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		gone(t, state, a, b)
	})
}
