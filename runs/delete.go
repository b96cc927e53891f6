package runs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/vishvananda/netns"

	"github.com/devbulk/devbulk/batch"
	"github.com/devbulk/devbulk/devices"
	"github.com/devbulk/devbulk/internal/owner"
	"github.com/devbulk/devbulk/nlbatch"
)

// ErrRunning reports a run whose devbulk process still runs.
var ErrRunning = errors.New("the run's devbulk is still running")

// DeleteOptions choose the runs to delete and how.
type DeleteOptions struct {
	// Netns is the namespace as the user named it (see OpenNetns); NS and
	// Inode are that namespace, open.
	Netns string
	NS    netns.NsHandle
	Inode uint64
	// Prefix and Kind, when set, keep only runs whose prefix starts with
	// Prefix, of kind Kind.
	Prefix, Kind string
	Strategy     batch.DeleteStrategy
	Workers      int
	// Force deletes a run even while the devbulk that made it still runs.
	Force    bool
	Progress func(deleted, total int)
}

// Outcome is what a delete did to one recorded run.
type Outcome struct {
	Record *Record
	Phase  batch.Phase
	Err    error
	// Removed says the record is gone: nothing of the run is left.
	Removed bool
}

// DeleteReport is what Store.Delete did, run by run, and what it noticed.
type DeleteReport struct {
	Runs []Outcome
	// Bad are record files that are not records (ignored; Cleanup moves
	// them aside); Stale are other records whose namespace is gone.
	Bad   []Bad
	Stale []*Record
}

// Err joins the runs' errors.
func (r *DeleteReport) Err() error {
	var errs []error
	for _, o := range r.Runs {
		if o.Err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", o.Record, o.Err))
		}
	}
	return errors.Join(errs...)
}

// Delete deletes the recorded runs in namespace o.NS, and nothing else. A
// record matches when its namespace is the same file and inode. Everything
// that can be refused is refused before anything is deleted: a strategy
// that does not apply, a module that cannot be unloaded; a run whose
// devbulk still runs is refused unless o.Force. Each run's record is
// marked "deleting" before its first request, then rewritten with the
// devices still present (renamed, moved to another group, not deleted), or
// removed when nothing is left.
func (s *Store) Delete(ctx context.Context, conn *nlbatch.Conn, o DeleteOptions) (*DeleteReport, error) {
	if o.Strategy == batch.DeleteNetns {
		return nil, batch.DeleteNetns.Applies(devices.Ifb, false)
	}
	recs, bad, err := s.Load()
	if err != nil {
		return nil, err
	}
	rep := &DeleteReport{Bad: bad}
	want, _, _ := NetnsPath(o.Netns)
	var mine []*Record
	for _, r := range recs {
		path, _, _ := NetnsPath(r.Netns)
		switch {
		case r.Inode != o.Inode || path != want:
			if quickStale(r) {
				rep.Stale = append(rep.Stale, r)
			}
		case strings.HasPrefix(r.Prefix, o.Prefix) && (o.Kind == "" || r.Kind == o.Kind):
			mine = append(mine, r)
		}
	}
	for _, r := range mine {
		k, err := devices.Lookup(r.Kind)
		if err != nil {
			return nil, err
		}
		if err := o.Strategy.Applies(k, false); err != nil {
			return nil, err
		}
		if o.Strategy == batch.DeleteModule {
			if err := batch.ModuleLoaded(k); err != nil {
				return nil, err
			}
		}
	}
	// Every refusal before anything is deleted: a run whose devbulk still
	// runs, devices of others on any run's devices.
	refused := false
	for _, r := range mine {
		out := Outcome{Record: r}
		if r.Owner.Alive() && r.Owner != owner.Self() && !o.Force {
			out.Err = fmt.Errorf("%w (%s, state %s): refusing; wait for it to finish, or --force", ErrRunning, r.Owner, r.State)
		} else if set, err := r.Set(nil); err != nil {
			out.Err = err
		} else if r.Devices() > 0 && len(mine) > 1 {
			// One run's delete refuses before its first request by
			// itself; several runs are refused all or none.
			out.Err = batch.Refusal(ctx, batch.Target{Conn: conn, NS: o.NS}, set)
		}
		if out.Err != nil {
			refused = true
			rep.Runs = append(rep.Runs, out)
		}
	}
	if refused {
		return rep, nil
	}
	for _, r := range mine {
		if err := ctx.Err(); err != nil {
			break
		}
		out := Outcome{Record: r}
		out.Phase, out.Removed, out.Err = s.deleteSet(ctx, conn, o.NS, r, o.Strategy, batch.DeleteOptions{Workers: o.Workers, Progress: o.Progress})
		rep.Runs = append(rep.Runs, out)
	}
	return rep, nil
}

// deleteSet deletes one run's devices with strategy d and keeps the record
// in step with what is left.
//
// The record is marked "deleting", and owned by this process, before the
// first request (batch.DeleteOptions.BeforeFirst): a concurrent cleanup then
// leaves it alone, and one after a kill -9 finishes it. When the delete
// changed nothing (refused, also after the mark, or interrupted before its
// first device) the state goes back to what it was; the record's devices
// are rewritten only once the delete has looked every one of them up
// afterwards.
func (s *Store) deleteSet(ctx context.Context, conn *nlbatch.Conn, ns netns.NsHandle, r *Record, d batch.DeleteStrategy, do batch.DeleteOptions) (batch.Phase, bool, error) {
	set, err := r.Set(s.Save)
	if err != nil {
		return batch.Phase{}, false, err
	}
	state, creator, marks := r.State, r.Owner, slices.Clone(r.Marks)
	marked := false
	do.BeforeFirst = func() error {
		r.State, r.Owner, marked = Deleting, owner.Self(), true
		return s.Save(r)
	}
	p, err := batch.Delete(ctx, batch.Target{Conn: conn, NS: ns}, set, d, do)
	r.Marks = set.Marks
	if p.Settled {
		r.Links, r.Lowers = set.Links, set.Lowers
		if r.Devices() == 0 {
			return p, true, errors.Join(err, s.Remove(r))
		}
	}
	if marked && (!p.Acted() || unchanged(p)) {
		r.State, r.Owner = state, creator
	}
	if !marked && !p.Settled && slices.Equal(r.Marks, marks) {
		return p, false, err // refused before anything: the file is as it was
	}
	return p, false, errors.Join(err, s.Save(r))
}

// unchanged reports whether a delete phase left every recorded device as
// it was: nothing deleted, nothing vanished. Unknown (not settled) is not
// unchanged.
func unchanged(p batch.Phase) bool {
	if !p.Settled {
		return false
	}
	for _, l := range p.Left {
		if !l.Present {
			return false
		}
	}
	return p.Deleted == 0
}

// Survey reads the store for a command that works beside other runs: the
// files that are not records, and the records whose namespace is gone.
func (s *Store) Survey() (bad []Bad, stale []*Record, err error) {
	recs, bad, err := s.Load()
	for _, r := range recs {
		if quickStale(r) {
			stale = append(stale, r)
		}
	}
	return bad, stale, err
}

// quickStale reports whether a record's namespace is visibly gone: its
// --netns no longer leads to the recorded inode. (Cleanup looks further: a
// namespace may live on, unnamed, held by a process.)
func quickStale(r *Record) bool {
	ns, err := openRecorded(r)
	if err != nil {
		return true
	}
	ns.Close()
	return false
}
