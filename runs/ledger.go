package runs

import (
	"github.com/devbulk/devbulk/batch"
	"github.com/devbulk/devbulk/internal/owner"
)

// ledger keeps one run's record as batch tells it what happens: the
// batch.Ledger of the store.
type ledger struct {
	s    *Store
	r    *Record
	recs []*Record // the store's records, for Taken
	// marked says Deleting was told: the record is "deleting", this
	// process's.
	marked bool
}

func (l *ledger) Taken(g uint32) bool { return groupRecorded(l.recs, g) }

func (l *ledger) Keep(set *batch.Set, complete bool) error {
	l.r.Group, l.r.Marks, l.r.Links, l.r.Lowers = set.Group, set.Marks, set.Links, set.Lowers
	if complete {
		l.r.State = Complete
	}
	return l.s.Save(l.r)
}

func (l *ledger) Marked(set *batch.Set) error {
	l.r.Marks = set.Marks
	return l.s.Save(l.r)
}

func (l *ledger) Deleting() error {
	l.r.State, l.r.Owner, l.marked = Deleting, owner.Self(), true
	return l.s.Save(l.r)
}

func (l *ledger) Forget() error { return l.s.Remove(l.r) }
