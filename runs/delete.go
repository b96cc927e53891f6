package runs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/devbulk/devbulk/batch"
	"github.com/devbulk/devbulk/internal/owner"
	"github.com/devbulk/devbulk/namespace"
	"github.com/devbulk/devbulk/nlbatch"
)

// ErrRunning reports a run whose devbulk process still runs.
var ErrRunning = errors.New("the run's devbulk is still running")

// DeleteOptions choose the runs to delete and how.
type DeleteOptions struct {
	// NS is the namespace, open, as the user named it. Every run made in
	// that namespace is found, whatever name it was made under.
	NS namespace.NS
	// Prefix and Kind, when set, keep only the run with that prefix, of
	// kind Kind.
	Prefix, Kind string
	Strategy     batch.DeleteStrategy
	Workers      int
	// Force stops (SIGKILL) the devbulk that still runs a run, then deletes
	// the run: nothing it made is left out of a record.
	Force bool
	// ForgetRenamed drops devices someone else renamed from the record
	// (they are no longer recognisably devbulk's, and are not deleted), so
	// that the rest of the run can be deleted and its record removed.
	ForgetRenamed bool
	Progress      func(deleted, total int)
}

// stopTimeout bounds the wait for a killed devbulk to exit.
const stopTimeout = 30 * time.Second

// Outcome is what a delete did to one recorded run.
type Outcome struct {
	Record *Record
	Phase  batch.Phase
	Err    error
	// Removed says the record is gone: nothing of the run is left.
	Removed bool
	// Stopped says the run's devbulk was still running and was killed
	// first (DeleteOptions.Force).
	Stopped bool
	// Forgotten are the renamed devices dropped from the record
	// (DeleteOptions.ForgetRenamed).
	Forgotten []batch.Leftover
	// Siblings names the devices of other devbulk runs that went during
	// the delete (their own delete, most likely): devbulk's, not an alarm.
	// They are not in Phase.Vanished.
	Siblings []string
}

// Report is what Store.Delete or Store.Move did, run by run, and what it
// noticed.
type Report struct {
	Runs []Outcome
	// Bad are record files that are not records and may be of this
	// namespace (ignored: their devices are not deleted; Cleanup moves them
	// aside); BadElsewhere are those that name another namespace.
	Bad, BadElsewhere []Bad
	// Stale are other records whose namespace is gone.
	Stale []*Record
	// Unmatched are the runs in this namespace that --prefix or --kind
	// left out.
	Unmatched []*Record
}

// Err joins the runs' errors.
func (r *Report) Err() error {
	var errs []error
	for _, o := range r.Runs {
		if o.Err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", o.Record, o.Err))
		}
	}
	return errors.Join(errs...)
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
		if err := o.Strategy.Ready(batch.Target{Conn: conn, NS: o.NS.Handle}, set, batch.DeleteOptions{}); err != nil {
			return nil, err
		}
	}
	t := batch.Target{Conn: conn, NS: o.NS.Handle}
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

// choose loads the records and picks the runs in the namespace with inode
// ino and cookie, on either side of a move, of prefix and kind when set,
// each facing it (Record.turn); the report holds what was noticed on the
// way.
func (s *Store) choose(ns namespace.NS, prefix, kind string) ([]*Record, *Report, []*Record, error) {
	ino, cookie := ns.Inode, ns.Cookie
	recs, bad, err := s.Load()
	if err != nil {
		return nil, nil, nil, err
	}
	rep := &Report{}
	for _, b := range bad {
		if i := b.inode(); i != 0 && i != ino {
			rep.BadElsewhere = append(rep.BadElsewhere, b)
		} else {
			rep.Bad = append(rep.Bad, b)
		}
	}
	stale := staleness{}
	var mine []*Record
	for _, r := range recs {
		switch {
		case !r.Touches(ino, cookie):
			if stale.of(r) {
				rep.Stale = append(rep.Stale, r)
			}
		case (prefix == "" || r.Prefix == prefix) && (kind == "" || strings.EqualFold(r.Kind, kind)):
			r.face(ino, cookie)
			mine = append(mine, r)
		default:
			rep.Unmatched = append(rep.Unmatched, r)
		}
	}
	return recs, rep, mine, nil
}

// takeOver makes the runs this process's to delete, or says why not, before
// anything is deleted: a run whose devbulk still runs is refused, or with
// o.Force that devbulk is killed first and the run read again as it left it
// (a run it had finished undoing is gone); devices of others on any run's
// devices refuse all runs when there are several (one run's delete refuses
// by itself before its first request).
func (s *Store) takeOver(ctx context.Context, t batch.Target, force bool, mine []*Record) ([]*Record, map[*Record]bool, []Outcome) {
	var refused []Outcome
	var runs []*Record
	stopped := map[*Record]bool{}
	for _, r := range mine {
		out := Outcome{Record: r}
		if r.Owner.Alive() && r.Owner != owner.Self() {
			if !force {
				out.Err = fmt.Errorf("%w (%s, state %s): refusing; wait for it to finish, or --force to stop it first", ErrRunning, r.Owner, r.State)
				refused = append(refused, out)
				continue
			}
			if out.Err = r.Owner.Stop(stopTimeout); out.Err == nil {
				faced := r.Place
				if r, out.Err = s.reread(r); r != nil {
					r.face(faced.Inode, faced.Cookie)
				}
			}
			if out.Err != nil {
				refused = append(refused, out)
				continue
			}
			if r == nil {
				continue // its devbulk had undone the run
			}
			stopped[r] = true
		}
		runs = append(runs, r)
	}
	if len(refused) > 0 || len(runs) < 2 {
		return runs, stopped, refused
	}
	for _, r := range runs {
		set, err := r.Set()
		if err == nil && r.Devices() > 0 {
			err = batch.Refusal(ctx, t, set)
		}
		if err != nil {
			refused = append(refused, Outcome{Record: r, Err: err})
		}
	}
	return runs, stopped, refused
}

// again reads a chosen run again right before it is worked on: another
// devbulk (one --force stopped, or one deleting it meanwhile) may have
// changed it. It returns nil when the run is gone; an error when another
// devbulk has it now; a move a killed devbulk left is resolved first
// (resolveMove). The run faces the namespace with inode ino and cookie, as
// chosen.
func (s *Store) again(r *Record, ns namespace.NS) (*Record, error) {
	ino, cookie := ns.Inode, ns.Cookie
	now, err := s.reread(r)
	if now == nil || err != nil {
		return nil, err
	}
	// The loaded copy's devices are now's (200 000 links are 17 MB);
	// siblings passes it over by its group.
	r.Links, r.Lowers, r.To = nil, nil, nil
	if now.Owner.Alive() && now.Owner != owner.Self() {
		return nil, fmt.Errorf("%w (%s, state %s): it took the run over meanwhile", ErrRunning, now.Owner, now.State)
	}
	if now.State == Moving {
		if err := s.resolveMove(now); err != nil {
			return nil, err
		}
	}
	switch {
	case !now.Touches(ino, cookie):
		return nil, nil // its devices all went elsewhere meanwhile
	case now.State == Deleting && !now.In(ino, cookie):
		// A record with two sides is "deleting" for its own.
		return nil, fmt.Errorf("a delete of its part in netns %s was interrupted: `devbulk cleanup` finishes it first", now.Netns)
	}
	now.face(ino, cookie)
	return now, nil
}

// reread reads a record again from the store: nil when it is gone. When
// the file still holds the bytes Load parsed r from, they are not parsed
// again (2000 links are ~150 KB of garbage): what they parsed to is given,
// as Load kept it before choose faced r (a moved run's sides as the file
// has them, which again and resolveMove expect).
func (s *Store) reread(r *Record) (*Record, error) {
	path := s.path(r)
	b, err := readRecordFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if was, ok := s.read[r]; ok {
		delete(s.read, r)
		if bytes.Equal(b, was.bytes) {
			return was.as, nil
		}
	}
	return parse(filepath.Base(path), b)
}

// siblings takes out of p.Vanished the devices that other devbulk runs
// recorded (by name and kind's prefix), and returns them.
func siblings(p *batch.Phase, r *Record, recs []*Record) []string {
	if len(p.Vanished) == 0 {
		return nil
	}
	theirs := map[string]bool{}
	for _, o := range recs {
		if o == r || o.Group == r.Group || !o.Touches(r.Inode, r.Cookie) {
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
	p, out, err := batch.Delete(ctx, t, set, o.Strategy, batch.DeleteOptions{Workers: o.Workers, Progress: o.Progress, Ledger: l})
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

// Survey reads the store for a command that works beside other runs: the
// files that are not records, and the records whose namespace is gone.
func (s *Store) Survey() (bad []Bad, stale []*Record, err error) {
	recs, bad, err := s.Load()
	var st staleness
	for _, r := range recs {
		if st.of(r) {
			stale = append(stale, r)
		}
	}
	return bad, stale, err
}

// staleness tells records whose namespaces are gone: for each, neither its
// --netns nor any namespace still held (a process, a descriptor or a bind
// mount) is the recorded one. The namespaces held are listed once, when
// first needed (a walk of /proc: tens of milliseconds on a busy host).
type staleness struct{ held map[uint64]string }

func (st *staleness) of(r *Record) bool {
	return st.gone(r.Place) && (r.To == nil || st.gone(r.To.Place))
}

// gone reports whether namespace p is gone.
func (st *staleness) gone(p Place) bool {
	if ns, err := openRecorded(p); err == nil {
		ns.Close()
		return false
	}
	if st.held == nil {
		st.held = namespace.Discover()
	}
	path, ok := st.held[p.Inode]
	if !ok {
		return true
	}
	ns, err := namespace.OpenFile(path)
	if err != nil {
		return true
	}
	defer ns.Close()
	return !p.In(ns.Inode, ns.Cookie)
}
