package runs

import (
	"context"
	"errors"
	"slices"

	"github.com/devbulk/devbulk/batch"
	"github.com/devbulk/devbulk/namespace"
	"github.com/devbulk/devbulk/nlbatch"
)

// DeleteOptions choose the runs to delete and how.
type DeleteOptions struct {
	// NS is the namespace, open, as the user named it. Every run made in
	// that namespace is found, whatever name it was made under.
	NS namespace.NS
	// Prefix and Kind, when set, keep only the run with that prefix, of
	// kind Kind.
	Prefix, Kind string
	Strategy     batch.DeleteStrategy
	Own          batch.Own // the strategy's own options (batch.ParallelOptions)
	// Force stops (SIGKILL) the devbulk that still runs a run, then deletes
	// the run: nothing it made is left out of a record.
	Force bool
	// ForgetRenamed drops devices someone else renamed from the record
	// (they are no longer recognisably devbulk's, and are not deleted), so
	// that the rest of the run can be deleted and its record removed.
	ForgetRenamed bool
	Progress      func(deleted, total int)
}

// Delete deletes the recorded runs in namespace o.NS, and nothing else. A
// record matches when its namespace is o.NS (Record.In), however either was
// named. Everything that can be refused is refused before anything is
// deleted: a strategy that does not apply, a module that cannot be
// unloaded; a run whose devbulk still runs is refused unless o.Force, which
// stops that devbulk first. Each run's record is marked "deleting" before
// its first request, then rewritten with the devices still present
// (renamed, moved to another group, not deleted), or removed when nothing
// is left.
func (s *Store) Delete(ctx context.Context, conn *nlbatch.Conn, o DeleteOptions) (*Report, error) {
	if err := o.Strategy.Applies(nil, false); err != nil { // whatever the runs found
		return nil, err
	}
	recs, rep, mine, err := s.choose(o.NS, o.Prefix, o.Kind)
	if err != nil {
		return nil, err
	}
	for _, r := range mine {
		set, err := r.Set()
		if err != nil {
			return nil, err
		}
		if err := o.Strategy.Ready(batch.Target{Conn: conn, NS: o.NS}, set, batch.DeleteOptions{}); err != nil {
			return nil, err
		}
	}
	t := batch.Target{Conn: conn, NS: o.NS}
	mine, stopped, refusals := s.takeOver(ctx, t, o.Force, mine)
	if len(refusals) > 0 {
		rep.Runs = refusals
		return rep, nil
	}
	for _, r := range mine {
		if err := ctx.Err(); err != nil {
			break
		}
		now, err := s.again(r, o.NS)
		if now == nil && err == nil {
			continue // deleted meanwhile, by the devbulk that had it
		}
		out := Outcome{Record: now, Stopped: stopped[r], Err: err}
		if err != nil {
			out.Record = r
			rep.Runs = append(rep.Runs, out)
			continue
		}
		out.Phase, out.Removed, out.Forgotten, out.Err = s.deleteSet(ctx, t, now, o)
		out.Siblings = siblings(&out.Phase, now, recs)
		rep.Runs = append(rep.Runs, out)
	}
	return rep, nil
}

// siblings takes out of p.Vanished the devices that other devbulk runs
// recorded (by name and kind's prefix), and returns them.
func siblings(p *batch.Phase, r *Record, recs []*Record) []string {
	if len(p.Vanished) == 0 {
		return nil
	}
	theirs := map[string]bool{}
	for _, o := range recs {
		if o == r || o.Group == r.Group || !o.Touches(r.ID()) {
			continue // not another run of this namespace
		}
		for _, l := range append(slices.Clone(o.Links), o.Lowers...) {
			theirs[l.Name] = true
		}
		if o.To != nil {
			for _, l := range o.To.Links {
				theirs[l.Name] = true
			}
		}
		if len(o.Links) == 0 { // a run still creating has recorded no names yet
			for _, v := range p.Vanished {
				if o.owns(v) {
					theirs[v] = true
				}
			}
		}
	}
	var sib, foreign []string
	for _, v := range p.Vanished {
		if theirs[v] {
			sib = append(sib, v)
		} else {
			foreign = append(foreign, v)
		}
	}
	p.Vanished = foreign
	return sib
}

// deleteSet deletes one run's devices with o's strategy and keeps the
// record in step with what is left; with o.ForgetRenamed, devices someone
// renamed are dropped from it (and returned).
//
// The record is marked "deleting", and owned by this process, before the
// first request (the ledger's Deleting): a concurrent cleanup then
// leaves it alone, and one after a kill -9 finishes it. When the delete
// changed nothing (refused, also after the mark, or interrupted before its
// first device) the state goes back to what it was; the record's devices
// are rewritten only once the delete has looked every one of them up
// afterwards.
func (s *Store) deleteSet(ctx context.Context, t batch.Target, r *Record, o DeleteOptions) (batch.Phase, bool, []batch.Leftover, error) {
	set, err := r.Set()
	if err != nil {
		return batch.Phase{}, false, nil, err
	}
	state, creator, marks := r.State, r.Owner, slices.Clone(r.Marks)
	l := &ledger{s: s, r: r}
	p, out, err := batch.Delete(ctx, t, set, o.Strategy, batch.DeleteOptions{Own: o.Own, Progress: o.Progress, Ledger: l})
	marked := l.marked
	r.Marks = set.Marks
	var forgotten []batch.Leftover
	if out.Settled {
		r.Links, r.Lowers = set.Links, set.Lowers
		if o.ForgetRenamed {
			forgotten = r.forgetRenamed(p.Left)
			if len(forgotten) > 0 && errors.Is(err, batch.ErrSurvivors) && !stillPresent(p.Left) {
				err = nil // the survivors were the renamed devices, now forgotten
			}
		}
		if r.Devices() == 0 {
			return p, true, forgotten, errors.Join(err, s.Remove(r))
		}
		if r.here() == 0 { // this side of a moved run is gone
			r.State, r.Owner, marked = Complete, creator, false // the other is as it was
			r.settle()
		}
	}
	if marked && (!out.Acted || unchanged(p, out)) {
		r.State, r.Owner = state, creator
	}
	if !marked && !out.Settled && slices.Equal(r.Marks, marks) && len(forgotten) == 0 {
		return p, false, nil, err // refused before anything: the file is as it was
	}
	return p, false, forgotten, errors.Join(err, s.Save(r))
}

// forgetRenamed drops from the record the devices that left says were
// renamed, and returns them.
func (r *Record) forgetRenamed(left []batch.Leftover) []batch.Leftover {
	renamed := map[int32]bool{}
	var out []batch.Leftover
	for _, l := range left {
		if l.RenamedTo != "" {
			renamed[l.Link.Index] = true
			out = append(out, l)
		}
	}
	drop := func(l nlbatch.Link) bool { return renamed[l.Index] }
	r.Links = slices.DeleteFunc(r.Links, drop)
	r.Lowers = slices.DeleteFunc(r.Lowers, drop)
	return out
}

// stillPresent reports whether a device the delete left is still there
// under its recorded name (not deleted), as opposed to renamed.
func stillPresent(left []batch.Leftover) bool {
	for _, l := range left {
		if l.Present && l.RenamedTo == "" {
			return true
		}
	}
	return false
}

// unchanged reports whether a delete phase left every recorded device as
// it was: nothing deleted, nothing vanished. Unknown (not settled) is not
// unchanged.
func unchanged(p batch.Phase, out batch.Outcome) bool {
	if !out.Settled {
		return false
	}
	for _, l := range p.Left {
		if !l.Present {
			return false
		}
	}
	return p.Deleted == 0
}
