package runs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/devbulk/devbulk/batch"
	"github.com/devbulk/devbulk/internal/owner"
	"github.com/devbulk/devbulk/namespace"
)

// This file chooses the recorded runs a delete or a move works on, takes
// them over from a devbulk still running them, and reads each again right
// before its turn.

// ErrRunning reports a run whose devbulk process still runs.
var ErrRunning = errors.New("the run's devbulk is still running")

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

// choose loads the records and picks the runs in namespace ns, on either
// side of a move, of prefix and kind when set,
// each facing it (Record.turn); the report holds what was noticed on the
// way.
func (s *Store) choose(ns namespace.NS, prefix, kind string) ([]*Record, *Report, []*Record, error) {
	recs, bad, err := s.Load()
	if err != nil {
		return nil, nil, nil, err
	}
	rep := &Report{}
	for _, b := range bad {
		if i := b.inode(); i != 0 && i != ns.Inode {
			rep.BadElsewhere = append(rep.BadElsewhere, b)
		} else {
			rep.Bad = append(rep.Bad, b)
		}
	}
	var mine []*Record
	for _, r := range recs {
		switch {
		case !r.Touches(ns.ID):
		case (prefix == "" || r.Prefix == prefix) && (kind == "" || strings.EqualFold(r.Kind, kind)):
			r.face(ns.ID)
			mine = append(mine, r)
		default:
			rep.Unmatched = append(rep.Unmatched, r)
		}
	}
	return recs, rep, mine, nil
}

// takeOver makes the runs this process's to delete, or says why not, before
// anything is deleted: a run whose devbulk still runs is refused, or with
// o.Force that devbulk is killed first (one already killed, still finishing
// a request in the kernel, is waited for) and the run read again as it left it
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
			// A devbulk killed while a request of its is in the kernel
			// (Owner.Dying) is waited for, as a stopped one is.
			dying := r.Owner.Dying()
			if !force && !dying {
				out.Err = fmt.Errorf("%w (%s, state %s): refusing; wait for it to finish, or --force to stop it first", ErrRunning, r.Owner, r.State)
				refused = append(refused, out)
				continue
			}
			if out.Err = r.Owner.Stop(stopTimeout); out.Err == nil {
				faced := r.Place
				if r, out.Err = s.reread(r); r != nil {
					r.face(faced.ID())
				}
			}
			if out.Err != nil {
				refused = append(refused, out)
				continue
			}
			if r == nil {
				continue // its devbulk had undone the run
			}
			stopped[r] = !dying
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
// (resolveMove). The run faces namespace ns, as chosen.
func (s *Store) again(r *Record, ns namespace.NS) (*Record, error) {
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
	case !now.Touches(ns.ID):
		return nil, nil // its devices all went elsewhere meanwhile
	case now.State == Deleting && !now.In(ns.ID):
		// A record with two sides is "deleting" for its own.
		return nil, fmt.Errorf("a delete of its part in netns %s was interrupted: `devbulk cleanup` finishes it first", now.Netns)
	}
	now.face(ns.ID)
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
