package runs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/devbulk/devbulk"
	"github.com/devbulk/devbulk/batch"
	"github.com/devbulk/devbulk/internal/owner"
	"github.com/devbulk/devbulk/namespace"
	"github.com/devbulk/devbulk/nlbatch"
)

// MoveOptions choose the runs to move, where to, and how.
type MoveOptions struct {
	// NS is the namespace the runs are in, as DeleteOptions name it; To
	// the one they go to.
	NS, To namespace.NS
	// Prefix and Kind, when set, keep only the run with that prefix, of
	// kind Kind.
	Prefix, Kind string
	Strategy     batch.MoveStrategy
	Own          batch.Own // the strategy's own options (batch.ParallelOptions)
	// Force stops (SIGKILL) the devbulk that still runs a run first.
	Force    bool
	Progress func(moved, total int)
}

// ErrSameNamespace refuses a move into the namespace the runs are in.
var ErrSameNamespace = errors.New("nothing would move")

// Move moves the links of the recorded runs in namespace o.NS (on either
// side of an earlier move) into o.To with strategy o.Strategy (see
// batch.Move: only the runs' devices, looked up again right before each
// window), and the record follows them. Everything that can be refused is
// refused before anything moves: a kind the kernel keeps in its namespace,
// a run with lower devices devbulk made (they would stay behind), a run
// part of which is in a third namespace, a run still being created or
// deleted, names of the runs taken in the destination, a run whose devbulk
// still runs (unless o.Force, which stops it first).
//
// A run's record is marked "moving", naming the destination, before the
// first request: a devbulk killed meanwhile leaves the links on either side
// and the record says where to look (resolveMove). Afterwards the record
// holds the links where they are: all in the destination, or, when only
// some moved, those on each side (Record.To), which a later move, delete
// or cleanup finds.
func (s *Store) Move(ctx context.Context, conn *nlbatch.Conn, o MoveOptions) (*Report, error) {
	if o.To.ID.Is(o.NS.ID) {
		return nil, fmt.Errorf("%w: --to %s is the namespace --netns %s names", ErrSameNamespace, o.To.Name, o.NS.Name)
	}
	to, err := nlbatch.Dial(o.To.Handle, nlbatch.Options{})
	if err != nil {
		return nil, fmt.Errorf("the destination %s: %w", o.To.Name, err)
	}
	defer to.Close()
	_, rep, mine, err := s.choose(o.NS, o.Prefix, o.Kind)
	if err != nil {
		return nil, err
	}
	for _, r := range mine {
		if err := r.movableNow(o, to); err != nil {
			return nil, fmt.Errorf("%s: %w", r, err)
		}
	}
	t := batch.Target{Conn: conn, NS: o.NS}
	mine, stopped, refusals := s.takeOver(ctx, t, o.Force, mine)
	if len(refusals) > 0 {
		rep.Runs = refusals
		return rep, nil
	}
	dest := batch.Destination{Conn: to, NS: o.To}
	for _, r := range mine {
		if ctx.Err() != nil {
			break
		}
		now, err := s.again(r, o.NS)
		if now == nil && err == nil {
			continue // gone meanwhile
		}
		if err == nil { // checked again as it is now: another devbulk may have changed it
			err = now.movableNow(o, to)
		}
		out := Outcome{Record: now, Stopped: stopped[r], Err: err}
		if err == nil {
			out.Phase, out.Removed, out.Err = s.moveRun(ctx, t, dest, now, o)
		} else if now == nil {
			out.Record = r
		}
		rep.Runs = append(rep.Runs, out)
	}
	return rep, nil
}

// movable says why the run cannot move as o asks, before anything is
// touched; there is what the destination holds.
func (r *Record) movable(o MoveOptions, there []nlbatch.Link) error {
	set, err := r.Set()
	if err != nil {
		return err
	}
	if err := o.Strategy.Applies(set.Kind, false); err != nil {
		return err
	}
	switch {
	case len(r.Lowers) > 0:
		return devbulk.NotSupported("the lower devices devbulk made for it (%s..) would stay behind in netns %s: a run with lower devices is not moved", r.Lowers[0].Name, r.Netns)
	case r.To != nil && !r.To.In(o.To.ID):
		return fmt.Errorf("part of it is in netns %s: move the rest there, or delete that part first", r.To.Netns)
	case r.State == Creating || r.State == Deleting:
		return fmt.Errorf("interrupted while %s: `devbulk cleanup` finishes it first", r.State)
	}
	if r.State == Moving {
		// Killed while moving: the destination holds links of the run that
		// the record does not list yet. Its names are checked once again
		// has found where its links are (resolveMove), right before its
		// move.
		return nil
	}
	// Only the exact names the run's links arrive with can clash: a device
	// there that merely shares the prefix (mm70001 beside mm0..mm599) does
	// not stop the kernel.
	arriving := names(r.Links)
	var taken []string
	for _, l := range there {
		if arriving[l.Name] {
			taken = append(taken, l.Name)
		}
	}
	if len(taken) > 0 {
		return devbulk.Mark(batch.ErrConflict, "netns %s already holds devices named as the run's links (%s): the kernel would refuse to move them there", o.To.Name, strings.Join(taken, ", "))
	}
	return nil
}

// movableNow is movable with what the destination holds now.
func (r *Record) movableNow(o MoveOptions, to *nlbatch.Conn) error {
	there, err := to.ScanLinks()
	if err != nil {
		return fmt.Errorf("the destination %s: %w", o.To.Name, err)
	}
	return r.movable(o, there)
}

// moveRun moves one run's links into to, marking the record "moving"
// first, and records where they are afterwards. It returns the phase, and
// whether the record is gone (nothing of the run left).
func (s *Store) moveRun(ctx context.Context, t batch.Target, to batch.Destination, r *Record, o MoveOptions) (batch.Phase, bool, error) {
	set, err := r.Set()
	if err != nil {
		return batch.Phase{}, false, err
	}
	creator := r.Owner
	if r.To == nil {
		r.To = &Part{Place: placeOf(o.To)}
	}
	r.State, r.Owner, r.Abandoned = Moving, owner.Self(), false
	if err := s.Save(r); err != nil {
		return batch.Phase{}, false, err
	}
	p, arrived, err := batch.Move(ctx, t, set, o.Strategy, batch.MoveOptions{To: to, Own: o.Own, Progress: o.Progress})
	if arrived == nil {
		// Refused, or the links could not be looked up afterwards: find
		// them as for a killed move.
		r.Owner = creator
		return p, false, errors.Join(err, s.resolveMove(r))
	}
	// What arrived is on the other side only, even when the links left
	// behind could not all be looked up.
	went := names(arrived.Links)
	r.Links = slices.DeleteFunc(set.Links, func(l nlbatch.Link) bool { return went[l.Name] })
	r.To.Links = append(r.To.Links, arrived.Links...)
	r.State, r.Owner = Complete, creator
	r.settle()
	if r.Devices() == 0 {
		return p, true, errors.Join(err, s.Remove(r))
	}
	return p, false, errors.Join(err, s.Save(r))
}

// resolveMove finds where the links of a run left "moving" are (its devbulk
// was killed, or could not look them up afterwards), records each on its
// side, and makes the run complete again. A link is still on the run's side
// when its ifindex, name and one of the run's groups match there; else it
// moved when the destination has a device of its name, one of the run's
// groups and its kind (the move refused names taken there before it
// started, and the kernel may have given the device another ifindex); a
// link found nowhere stays where it was recorded, for the delete to say
// what became of it.
func (s *Store) resolveMove(r *Record) error {
	here, err := runLinks(r, r.Place)
	if err != nil {
		return err
	}
	there, err := runLinks(r, r.To.Place)
	if err != nil {
		return err
	}
	var stay, went []nlbatch.Link
	for _, l := range r.Links {
		if now, ok := here[l.Name]; ok && now.Index == l.Index {
			stay = append(stay, now)
		} else if now, ok := there[l.Name]; ok {
			went = append(went, now)
		} else {
			stay = append(stay, l)
		}
	}
	for _, l := range r.To.Links { // there before this move, ifindex confirmed
		if now, ok := there[l.Name]; ok && now.Index == l.Index {
			l = now
		}
		went = append(went, l)
	}
	r.Links, r.To.Links, r.State = stay, went, Complete
	r.settle()
	return s.Save(r)
}

// names is the set of the links' names.
func names(links []nlbatch.Link) map[string]bool {
	out := make(map[string]bool, len(links))
	for _, l := range links {
		out[l.Name] = true
	}
	return out
}

// runLinks is what namespace p holds of run r, by name: devices of its
// kind, named as its links, in one of its groups. A namespace that is gone
// holds nothing.
func runLinks(r *Record, p Place) (map[string]nlbatch.Link, error) {
	ns, ok := recordedNetns(p)
	if !ok {
		return nil, nil
	}
	defer ns.Close()
	conn, err := nlbatch.Dial(ns.Handle, nlbatch.Options{})
	if err != nil {
		return nil, fmt.Errorf("netns %s: %w", p.Netns, err)
	}
	defer conn.Close()
	links, err := conn.ScanLinks()
	if err != nil {
		return nil, fmt.Errorf("netns %s: %w", p.Netns, err)
	}
	out := map[string]nlbatch.Link{}
	for _, l := range links {
		if l.Kind == r.Kind && (l.Group == r.Group || slices.Contains(r.Marks, l.Group)) && r.ownName(l, "") == nil {
			out[l.Name] = l
		}
	}
	return out, nil
}
