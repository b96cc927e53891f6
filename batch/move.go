package batch

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/devbulk/devbulk"
	"github.com/devbulk/devbulk/nlbatch"
)

// MoveStrategy is a way to move a set's links into another namespace. Every
// move is the kernel's __dev_change_net_namespace, one device at a time
// under RTNL, each waiting for RCU (two synchronize_net and an
// rcu_barrier): there is no batch path, and the strategies differ only in
// how the requests reach the kernel.
type MoveStrategy string

// The move strategies.
const (
	// MoveSerial sends one RTM_NEWLINK with IFLA_NET_NS_FD and waits for
	// its ACK before the next.
	MoveSerial MoveStrategy = "serial"
	// MovePipelined keeps a window of them in flight (the Conn's).
	MovePipelined MoveStrategy = "pipelined"
	// MoveParallel splits the links over workers, one by one each, on
	// sockets of their own (MoveOptions.Workers).
	MoveParallel MoveStrategy = "parallel"
	// MoveGroup sends one RTM_NEWLINK for the run's group (ifindex 0,
	// IFLA_GROUP), which the kernel applies to each device of the group in
	// turn (rtnl_group_changelink).
	MoveGroup MoveStrategy = "group"
)

// MoveStrategies lists the move strategies: one request per device first.
func MoveStrategies() []MoveStrategy {
	return []MoveStrategy{MoveSerial, MovePipelined, MoveParallel, MoveGroup}
}

// ParseMove parses a move strategy.
func ParseMove(s string) (MoveStrategy, error) {
	if m := MoveStrategy(s); slices.Contains(MoveStrategies(), m) {
		return m, nil
	}
	var names []string
	for _, m := range MoveStrategies() {
		names = append(names, string(m))
	}
	return "", fmt.Errorf("unknown move strategy %q (valid: %s)", s, strings.Join(names, ", "))
}

// Destination is the namespace a move sends links into.
type Destination struct {
	// Conn is a socket there: the moved links are found through it.
	Conn *nlbatch.Conn
	// FD is the namespace's file descriptor, for IFLA_NET_NS_FD.
	FD int
}

// MoveOptions say where Move sends the links, and tune it.
type MoveOptions struct {
	To      Destination
	Workers int // parallel strategy; default 4
	// Progress, when set, receives the number of links moved so far out of
	// total by the one-by-one strategies.
	Progress func(done, total int)
}

// Movable says why the links of s cannot be moved, or nil.
func Movable(s *Set) error {
	if s.Kind != nil && s.Kind.NetnsLocal {
		return devbulk.NotSupported("%s links cannot leave their namespace: the kernel keeps them where they were made (NETIF_F_NETNS_LOCAL)", s.Kind.Name)
	}
	return nil
}

// Move moves the set's links (not the lower devices devbulk made for them,
// which stay) from t's namespace into o.To, with strategy m, and measures the
// phase. As Delete does, it names only the set's devices, looked up again
// right before each window of requests, and refuses when devices of others
// depend on them; a move by group first checks that the group holds the
// set's devices and nothing else. Afterwards each link is looked for in
// o.To: s.Links becomes the links found there (their ifindexes may have
// changed), and the phase counts them (Moved) and says what became of the
// rest (Left).
func Move(ctx context.Context, t Target, s *Set, m MoveStrategy, o MoveOptions) (Phase, error) {
	to := o.To
	p := Phase{Name: "move", Tool: "devbulk", Strategy: string(m), Devices: len(s.Links)}
	if err := Movable(s); err != nil {
		return p, err
	}
	if m == MoveGroup && len(s.Lowers) > 0 {
		return p, fmt.Errorf("%w: the lower devices devbulk made share the run's group: a move by group would take them too", ErrNotApplicable)
	}
	if m == MoveParallel && t.dialer() == nil {
		return p, fmt.Errorf("%w: the parallel strategy needs the namespace (Target.NS or Target.Dialer) to open its sockets in", ErrNotApplicable)
	}
	d := newDeletion(t, s, DeleteOptions{Workers: o.Workers, Progress: o.Progress}, &p)
	d.request = func(l nlbatch.Link) []byte { return nlbatch.SetNetnsRequest(l.Index, to.FD) }
	if _, _, err := d.look(ctx, m == MoveGroup); err != nil {
		return p, err
	}
	links, _ := s.split(d.mine)
	sent, err := d.move(ctx, m, links, to)
	d.stop()
	if serr := s.settleMove(t.Conn, to.Conn, sent, &p); serr != nil {
		return p, errors.Join(err, serr)
	}
	if err == nil {
		err = ctx.Err()
	}
	return p, err
}

// move sends the moves of links into to by strategy m, and returns the
// ifindexes it named in a request the kernel executed.
func (d *deletion) move(ctx context.Context, m MoveStrategy, links []nlbatch.Link, to Destination) (map[int32]bool, error) {
	progress := progressFrom(d.o.Progress, 0, len(links))
	switch m {
	case MoveSerial:
		return d.each(ctx, oneByOne{c: d.t.Conn, devs: links, window: 1, progress: progress, p: d.p})
	case MovePipelined:
		return d.each(ctx, oneByOne{c: d.t.Conn, devs: links, progress: progress, p: d.p})
	case MoveParallel:
		return d.parallel(ctx, links, progress)
	}
	if len(links) == 0 {
		return nil, nil
	}
	if !d.exact {
		return nil, fmt.Errorf("group %d holds devices that are not the run's: refusing to move by group", d.s.Group)
	}
	if err := d.first(); err != nil {
		return nil, err
	}
	if err := d.t.Conn.Do(ctx, nlbatch.SetGroupNetnsRequest(d.s.Group, to.FD)); err != nil && !errors.Is(err, nlbatch.ErrAckLost) {
		return nil, fmt.Errorf("move group %d: %w", d.s.Group, err)
	}
	return indexes(links), nil
}

// settleMove finds the set's links after a move. Those in to, by name and
// one of the run's groups (a move keeps both, and the ifindex where it is
// free there), were moved: they count (Moved) and become s.Links. The rest
// are Left: still here (not moved), or in neither namespace. sent is what
// a request named; a link found in to that none named is not counted.
func (s *Set) settleMove(from, to *nlbatch.Conn, sent map[int32]bool, p *Phase) error {
	there, err := to.LinksSized(len(s.Links))
	if err != nil {
		return fmt.Errorf("after the move, in the destination: %w", err)
	}
	arrived := map[string]nlbatch.Link{}
	for _, l := range there {
		if s.hasGroup(l.Group) && strings.HasPrefix(l.Name, s.Prefix) {
			arrived[l.Name] = l
		}
	}
	here, err := from.LinksSized(len(s.Links))
	if err != nil {
		return fmt.Errorf("after the move: %w", err)
	}
	stayed := map[int32]nlbatch.Link{}
	for _, l := range here {
		stayed[l.Index] = l
	}
	var moved []nlbatch.Link
	var left []Leftover
	for _, l := range s.Links {
		now, ok := arrived[l.Name]
		switch {
		case ok && sent[l.Index]:
			moved = append(moved, now)
		case stayed[l.Index].Name == l.Name:
			left = append(left, Leftover{Link: l, Present: true, Why: "not moved"})
		default:
			left = append(left, Leftover{Link: l, Why: "in neither namespace"})
		}
	}
	s.Links, p.Moved, p.Left = moved, len(moved), left
	p.Failed = p.Devices - p.Moved
	p.FillRates()
	return nil
}
