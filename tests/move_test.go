package tests

// Issue 26, item 1: devices that leave a namespace alive (batch.Move, bench
// --move), on the real kernel in throwaway namespaces.

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/devbulk/devbulk"
	"github.com/devbulk/devbulk/batch"
	"github.com/devbulk/devbulk/bench"
	"github.com/devbulk/devbulk/devices"
	"github.com/devbulk/devbulk/nlbatch"
)

// move moves set from s into to by strategy m.
func move(t *testing.T, s, to *scratch, set *batch.Set, m batch.MoveStrategy) (batch.Phase, *batch.Set, error) {
	t.Helper()
	return batch.Move(context.Background(), batch.Target{Conn: s.conn, NS: s.ns.NS}, set, m,
		batch.MoveOptions{To: batch.Destination{Conn: to.conn, NS: to.ns.NS}})
}

// 300 ifb moved by each strategy all arrive, with their names and group,
// and the set follows them (a group delete there takes them all); a
// device of others beside them, outside the run's group, stays.
func TestMoveEveryStrategy(t *testing.T) {
	k := needKind(t, "ifb")
	besideOthers(t)
	for _, m := range batch.MoveStrategies() {
		t.Run(string(m), func(t *testing.T) {
			from, to := newScratch(t), newScratch(t)
			_, rec := createRun(t, from, k, 300)
			stranger := from.add(t, devices.Link{Kind: k, Name: "stranger"})
			set, _ := rec.Set()
			p, moved, err := move(t, from, to, set, m)
			if err != nil || p.Moved != 300 || p.Failed != 0 || len(p.Left) != 0 || p.WallNS <= 0 || len(set.Links) != 0 || len(moved.Links) != 300 {
				t.Fatalf("move: %v, moved %d, failed %d, left %v; %d left in the set", err, p.Moved, p.Failed, p.Left, len(set.Links))
			}
			from.requireGone(t, "the move", rec.Links...)
			from.requirePresent(t, "the move (not the run's)", stranger)
			for _, l := range rec.Links { // looked up afresh where they went
				if now := to.byName(t, l.Name); now.Group != rec.Group {
					t.Fatalf("%s arrived in group %d, want the run's %d", l.Name, now.Group, rec.Group)
				}
			}
			d, _, err := batch.Delete(context.Background(), batch.Target{Conn: to.conn, NS: to.ns.NS}, moved, batch.DeleteGroup, batch.DeleteOptions{})
			if err != nil || d.Deleted != 300 {
				t.Errorf("delete where they arrived: %v, deleted %d", err, d.Deleted)
			}
		})
	}
}

// A device of others moved into the run's group: a move by group refuses
// and moves nothing (the group holds more than the run's); a serial move
// takes the run's devices and leaves it.
func TestMoveSparesAStrangerInTheGroup(t *testing.T) {
	k := needKind(t, "ifb")
	from, to := newScratch(t), newScratch(t)
	_, rec := createRun(t, from, k, 20)
	stranger := from.add(t, devices.Link{Kind: k, Name: "stranger"})
	from.setGroup(t, stranger, rec.Group)
	set, _ := rec.Set()
	if _, _, err := move(t, from, to, set, batch.MoveGroup); err == nil || !strings.Contains(err.Error(), "refusing to move by group") {
		t.Fatalf("move by group with a stranger in the group: %v", err)
	}
	from.requirePresent(t, "a refused move by group", append(rec.Links, stranger)...)
	p, _, err := move(t, from, to, set, batch.MoveSerial)
	if err != nil || p.Moved != 20 {
		t.Fatalf("serial move: %v, moved %d", err, p.Moved)
	}
	from.requirePresent(t, "a serial move (a stranger in the run's group)", stranger)
}

// A macvlan of others on one of the run's devices: the move refuses (the
// macvlan would lose its lower device to another namespace) and moves
// nothing; a bridge, which the kernel keeps where it was made, is refused
// before anything is looked at.
func TestMoveRefusals(t *testing.T) {
	k := needKind(t, "ifb")
	mv := needKind(t, "macvlan")
	from, to := newScratch(t), newScratch(t)
	_, rec := createRun(t, from, k, 10)
	on := rec.Links[4]
	upper, _ := mv.Plan(devices.Options{Count: 1, Prefix: "theirs", Lowers: []devices.Lower{{Index: on.Index, Name: on.Name}}})
	theirs := from.add(t, upper[0])
	set, _ := rec.Set()
	if _, _, err := move(t, from, to, set, batch.MoveSerial); !errors.Is(err, batch.ErrForeignDependents) || !strings.Contains(err.Error(), "refusing to move") {
		t.Fatalf("move under a macvlan of others: %v, want ErrForeignDependents", err)
	}
	from.requirePresent(t, "a refused move", append(rec.Links, theirs)...)
	bridge := &batch.Set{Kind: devices.Bridge, Links: []nlbatch.Link{{Index: 1, Name: "dbk0"}}}
	if _, _, err := move(t, from, to, bridge, batch.MoveSerial); !errors.Is(err, devbulk.ErrNotSupported) {
		t.Errorf("moving bridges: %v, want ErrNotSupported", err)
	}
}

// bench --move: each cycle creates, moves (the move phase, counted) and
// deletes where the links arrived, for every move × delete strategy, the
// order alternating; the table shows the move rows, and the headline
// compares the move strategies.
func TestBenchMove(t *testing.T) {
	needKind(t, "ifb")
	rep := benchJSON(t, "--kind", "ifb", "--count", "50", "--move", "serial,group", "--delete", "group,netns", "--repeat", "2")
	var order []string
	for _, c := range rep.Runs {
		if c.Move == nil || c.Move.Moved != 50 || c.Move.Failed != 0 || c.Delete.Failed != 0 {
			t.Fatalf("cycle %d: move %+v, delete failed %d", c.Repeat, c.Move, c.Delete.Failed)
		}
		order = append(order, c.Move.Strategy+"/"+c.Delete.Strategy)
	}
	if got := strings.Join(order, " "); got != "serial/group serial/netns group/group group/netns group/netns group/group serial/netns serial/group" {
		t.Errorf("cycles in the order %s", got)
	}
	var moves []bench.Comparison
	for _, c := range rep.Against {
		if c.Phase == "move" {
			moves = append(moves, c)
		}
	}
	if len(moves) != 1 || !strings.HasPrefix(moves[0].A, "move ") || !strings.HasPrefix(moves[0].B, "move ") {
		t.Errorf("move comparisons %+v: want the slower strategy against the faster", moves)
	}
	r := run(t, t.TempDir(), "bench", "--kind", "ifb", "--count", "20", "--move", "pipelined", "--delete", "group")
	if r.code != 0 || !strings.Contains(r.stdout, " move  pipelined ") {
		t.Errorf("table: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// Bad --move input exits 2 with one line, before anything is made; a kind
// the kernel keeps in its namespace exits 4.
func TestBenchMoveBadInput(t *testing.T) {
	needRoot(t)
	for args, want := range map[string]struct {
		code int
		text string
	}{
		"--kind ifb --move teleport":                  {2, `unknown move strategy "teleport" (valid: serial, pipelined, parallel, group)`},
		"--kind ifb --move serial,serial":             {2, "--move serial,serial gives serial twice"},
		"--kind ifb --move serial --compare iproute2": {2, "--move goes without --compare iproute2"},
		"--kind ifb --move serial --workers 3":        {2, "--workers applies to the parallel strategies only"},
		"--kind bridge --move serial --delete group":  {4, "bridge links cannot leave their namespace"},
		"--kind vlan --move serial --delete lower":    {2, "--move with --delete lower"},
		"--kind macvlan --move group --delete group":  {2, "--move group: macvlan: the lower devices devbulk made share the run's group"},
		"--kind veth --move serial --delete module":   {2, "--delete module after a move: the veth peers stay in the first namespace"},
	} {
		r := run(t, t.TempDir(), append([]string{"bench", "--count", "10"}, strings.Fields(args)...)...)
		if r.code != want.code || !strings.Contains(r.stderr, want.text) || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
			t.Errorf("bench %s: exit %d, stderr %q; want %d and %q", args, r.code, r.stderr, want.code, want.text)
		}
	}
	var rep bench.Report
	if json.Unmarshal([]byte(run(t, t.TempDir(), "bench", "--kind", "ifb", "--count", "5", "--move", "parallel", "--workers", "2", "--delete", "group", "--json").stdout), &rep) != nil ||
		len(rep.Runs) != 1 || rep.Runs[0].Move == nil || rep.Runs[0].Move.Moved != 5 {
		t.Errorf("--workers with --move parallel: %+v", rep.Runs)
	}
}

// The lower devices devbulk made stay where they were: macvlans moved by
// serial requests arrive alone, their lowers stay behind (the macvlans
// keep working on a lower in another namespace).
func TestMoveLeavesTheLowers(t *testing.T) {
	k := needKind(t, "macvlan")
	from, to := newScratch(t), newScratch(t)
	_, rec := createRun(t, from, k, 10)
	if len(rec.Lowers) == 0 {
		t.Fatal("the run made no lower devices")
	}
	set, _ := rec.Set()
	p, moved, err := move(t, from, to, set, batch.MoveSerial)
	if err != nil || p.Moved != 10 || len(moved.Lowers) != 0 {
		t.Fatalf("move: %v, moved %d, lowers in the moved set %v", err, p.Moved, moved.Lowers)
	}
	from.requirePresent(t, "the move of their macvlans", rec.Lowers...)
	there := to.links(t)
	for _, l := range rec.Lowers {
		for _, now := range there {
			if now.Name == l.Name {
				t.Errorf("lower device %s went with its macvlans", l.Name)
			}
		}
	}
}

// Which kinds the kernel moves, each checked here against the kind's
// table (NetnsLocal): one device of every kind this kernel has, moved by
// one request.
func TestNetnsLocalMatchesTheKernel(t *testing.T) {
	needRoot(t)
	for _, k := range devices.All() {
		if !probe[k.Name] {
			continue
		}
		t.Run(k.Name, func(t *testing.T) {
			from, to := newScratch(t), newScratch(t)
			o := devices.Options{Count: 1, Prefix: "mv", VNIBase: 4242, RemoteBase: devices.DefaultRemoteBase}
			if k.NeedsLower {
				lower := from.add(t, devices.Link{Kind: devices.LowerKind(probe), Name: "lowr"})
				o.Lowers = []devices.Lower{{Index: lower.Index, Name: lower.Name}}
			}
			links, err := k.Plan(o)
			if err != nil {
				t.Fatal(err)
			}
			l := from.add(t, links[0])
			err = from.conn.Do(context.Background(), nlbatch.SetNetnsRequest(l.Index, int(to.ns.NS.Handle)))
			if moved := err == nil; moved == k.NetnsLocal {
				t.Errorf("%s: moved %v (%v), but NetnsLocal is %v", k.Name, moved, err, k.NetnsLocal)
			}
		})
	}
}
