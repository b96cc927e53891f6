package batch

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/devbulk/devbulk"
	"github.com/devbulk/devbulk/devices"
	"github.com/devbulk/devbulk/internal/registry"
	"github.com/devbulk/devbulk/namespace"
	"github.com/devbulk/devbulk/nlbatch"
)

// MoveStrategy is a way to move a set's links into another namespace. Every
// move is the kernel's __dev_change_net_namespace, one device at a time
// under RTNL, each waiting for RCU (two synchronize_net and an
// rcu_barrier): there is no batch path, and the strategies differ only in
// how the requests reach the kernel.
type MoveStrategy string

// moveStrategy is one way to move a set's links; each is a file of its
// own (move_*.go) that registers it.
type moveStrategy struct {
	// order places it in lists shown to users: one request per device
	// first.
	order int
	// markFirst: one request moves the lot, so the look right before it
	// answers every check (the group holds the set's devices and nothing
	// else), as for a group delete.
	markFirst bool
	// applies says why it cannot move a set of kind k with lower devices
	// devbulk made (lowers), beyond what no move can; nil when it can.
	applies func(k *devices.Kind, lowers bool) error
	// ready says why it cannot move from t now; nil when it can.
	ready func(t Target) error
	// run sends the moves of links into to and returns the ifindexes it
	// named in a request the kernel executed (or may have).
	run func(ctx context.Context, d *job, links []nlbatch.Link, to Destination) (map[int32]bool, error)
}

var moveStrategies = registry.New[MoveStrategy]("batch: move strategy", func(s *moveStrategy) int { return s.order })

// registerMove adds a move strategy; each strategy's file calls it from
// init.
func registerMove(name MoveStrategy, s *moveStrategy) { moveStrategies.Add(name, s) }

// MoveStrategies lists the move strategies: one request per device first.
func MoveStrategies() []MoveStrategy { return moveStrategies.Names() }

// ParseMove parses a move strategy.
func ParseMove(s string) (MoveStrategy, error) {
	if moveStrategies.At(MoveStrategy(s)) != nil {
		return MoveStrategy(s), nil
	}
	return "", fmt.Errorf("unknown move strategy %q (valid: %s)", s, moveStrategies.List())
}

// Destination is the namespace a move sends links into.
type Destination struct {
	// Conn is a socket there: the moved links are found through it.
	Conn *nlbatch.Conn
	// NS is the namespace; its handle goes in IFLA_NET_NS_FD.
	NS namespace.NS
}

// MoveOptions say where Move sends the links, and tune it.
type MoveOptions struct {
	To Destination
	// Own is the strategy's own options (ParallelOptions); nil: its
	// defaults. Options of another strategy are refused.
	Own Own
	// Progress, when set, receives the number of links moved so far out of
	// total by the one-by-one strategies.
	Progress func(done, total int)
}

// Applies says why strategy m cannot move links of kind k (nil: whatever
// the kind), with lower devices devbulk made when lowers is set, or nil:
// for callers that refuse before anything is made.
func (m MoveStrategy) Applies(k *devices.Kind, lowers bool) error {
	if k != nil && k.NetnsLocal {
		return devbulk.NotSupported("%s links cannot leave their namespace: the kernel keeps them where they were made (NETIF_F_NETNS_LOCAL)", k.Name)
	}
	if st := moveStrategies.At(m); st != nil && st.applies != nil {
		return st.applies(k, lowers)
	}
	return nil
}

// Move moves the set's links (not the lower devices devbulk made for them,
// which stay) from t's namespace into o.To, with strategy m, and measures
// the phase. As Delete does, it names only the set's devices, looked up
// again right before each window of requests, and refuses when devices of
// others depend on them; a move by group first checks, in the look right
// before its request, that the group holds the set's devices and nothing
// else. It returns the links as they arrived, as a set of their own in
// o.To (no lower devices), and leaves in s those that did not move. A link
// counts as moved (Phase.Moved) when a request named it and it is found in
// o.To with its name and one of the run's groups, and either kept its
// ifindex or its name was free there before the move: a device of others
// already there under that name is never taken for the set's.
func Move(ctx context.Context, t Target, s *Set, m MoveStrategy, o MoveOptions) (Phase, *Set, error) {
	p := Phase{Name: "move", Tool: "devbulk", Strategy: string(m), Devices: len(s.Links)}
	if err := ownFor(o.Own, string(m)); err != nil {
		return p, nil, err
	}
	if err := movable(t, s, m); err != nil {
		return p, nil, err
	}
	before, err := o.To.Conn.ScanLinks() // what the destination held: outside the phase
	if err != nil {
		return p, nil, fmt.Errorf("the destination: %w", err)
	}
	d := newJob(t, s, DeleteOptions{Own: o.Own, Progress: o.Progress}, &p)
	d.request = func(l nlbatch.Link) []byte { return nlbatch.SetNetnsRequest(l.Index, int(o.To.NS.Handle)) }
	others, _, err := d.look(ctx, moveStrategies.At(m).markFirst)
	if err != nil {
		return p, nil, err
	}
	links, _ := s.split(d.mine)
	sent, err := moveStrategies.At(m).run(ctx, d, links, o.To)
	d.stop()
	moved, serr := s.settleMove(t.Conn, o.To.Conn, names(before), sent, &p)
	if serr == nil && t.Dedicated == nil {
		p.Vanished, serr = vanished(t.Conn, nil, others)
	}
	if serr != nil {
		return p, moved, errors.Join(err, serr)
	}
	if err == nil {
		err = ctx.Err()
	}
	return p, moved, err
}

// movable says why Move would refuse to move s by m from t before touching
// anything, or nil.
func movable(t Target, s *Set, m MoveStrategy) error {
	st := moveStrategies.At(m)
	if st == nil {
		return devbulk.Mark(ErrNotApplicable, "unknown move strategy %q", m)
	}
	if err := m.Applies(s.Kind, len(s.Lowers) > 0); err != nil {
		return err
	}
	if st.ready != nil {
		return st.ready(t)
	}
	return nil
}

// settleMove finds the set's links after a move. Those a request named and
// that are in to with their name and one of the run's groups, having kept
// their ifindex or taken a name that was free there before (taken: the
// names to held then), were moved: they count (Moved) and are returned as
// a set in to. The rest stay in s.Links and are Left, with what became of
// them.
func (s *Set) settleMove(from, to *nlbatch.Conn, taken map[string]bool, sent map[int32]bool, p *Phase) (*Set, error) {
	there, err := to.LinksSized(len(s.Links))
	if err != nil {
		return nil, fmt.Errorf("after the move, in the destination: %w", err)
	}
	arrived := map[string]nlbatch.Link{}
	for _, l := range there {
		if s.hasGroup(l.Group) && strings.HasPrefix(l.Name, s.Prefix) {
			arrived[l.Name] = l
		}
	}
	out := &Set{Kind: s.Kind, Group: s.Group, Marks: slices.Clone(s.Marks), Prefix: s.Prefix}
	var stayed []nlbatch.Link
	var unmoved []nlbatch.Link
	for _, l := range s.Links {
		if now, ok := arrived[l.Name]; ok && sent[l.Index] && (now.Index == l.Index || !taken[l.Name]) {
			out.Links = append(out.Links, now)
		} else {
			unmoved = append(unmoved, l)
		}
	}
	var left []Leftover
	err = s.each(context.Background(), lookup{c: from, owns: s.owner()}, unmoved, func(now nlbatch.Link, lo Leftover, owned bool) {
		switch {
		case owned:
			stayed = append(stayed, now)
			left = append(left, Leftover{Link: now, Present: true, Why: "not moved"})
		case lo.Present:
			stayed = append(stayed, lo.Link)
			left = append(left, lo)
		default:
			lo.Why += "; not found moved into the destination"
			left = append(left, lo)
		}
	})
	if err != nil {
		return out, err
	}
	s.Links, p.Moved, p.Left = stayed, len(out.Links), left
	p.Failed = p.Devices - p.Moved
	p.FillRates()
	return out, nil
}

// names is the set of the links' names.
func names(links []nlbatch.Link) map[string]bool {
	out := make(map[string]bool, len(links))
	for _, l := range links {
		out[l.Name] = true
	}
	return out
}
