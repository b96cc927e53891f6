package runs

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/devbulk/devbulk"
	"github.com/devbulk/devbulk/batch"
	"github.com/devbulk/devbulk/nlbatch"
)

// Cleaned is one thing Cleanup did, or could not do.
type Cleaned struct {
	What string // for people: what was found and done
	Err  error
}

// Cleanup removes what killed devbulk runs left: the devices of every run
// whose devbulk is gone and that was still creating or deleting (with all,
// completed runs too), the records of runs whose namespace or devices are
// gone (stale), and malformed records (moved aside). Runs of a devbulk
// still running are never touched. A run's namespace is found by its
// --netns when that still leads to the recorded inode, else by the inode
// among every namespace still held; its devices must still match the
// record (ifindex, name, group), so a namespace that reused the inode loses
// nothing.
func (s *Store) Cleanup(ctx context.Context, all bool) ([]Cleaned, error) {
	recs, bad, err := s.Load()
	if err != nil {
		return nil, err
	}
	var out []Cleaned
	for _, b := range bad {
		if !errors.Is(b.Err, ErrMalformed) {
			out = append(out, Cleaned{What: b.File, Err: b.Err})
			continue
		}
		to, err := s.Quarantine(b)
		out = append(out, Cleaned{What: fmt.Sprintf("%v: moved aside to %s", b.Err, to), Err: err})
	}
	for _, r := range recs {
		if ctx.Err() != nil {
			break
		}
		switch {
		case r.Owner.Alive():
			continue // a running devbulk's
		case r.State == Complete && !all:
			// The user's, until devbulk delete (or --all): only a record
			// whose namespace is gone is pruned.
			if ns, _ := recordedNetns(r); ns.IsOpen() {
				ns.Close()
				continue
			}
		}
		out = append(out, s.cleanupRun(ctx, r, recs))
	}
	return out, nil
}

func (s *Store) cleanupRun(ctx context.Context, r *Record, recs []*Record) Cleaned {
	ns, where := recordedNetns(r)
	if !ns.IsOpen() {
		return Cleaned{What: fmt.Sprintf("%s: stale, the namespace is gone (and its devices with it): record removed", r), Err: s.Remove(r)}
	}
	defer ns.Close()
	conn, err := nlbatch.Dial(ns, nlbatch.Options{})
	if err != nil {
		return Cleaned{What: r.String(), Err: err}
	}
	defer conn.Close()
	n := r.Devices()
	p, removed, _, err := s.deleteSet(ctx, batch.Target{Conn: conn, NS: ns}, r, DeleteOptions{Strategy: batch.DeleteGroup})
	sib := siblings(&p, r, recs)
	in := "netns " + r.Netns
	if where != r.Netns {
		in = fmt.Sprintf("netns %s (recorded as %s, found by inode)", where, r.Netns)
	}
	var what string
	switch {
	case removed && err == nil && p.Deleted == 0 && len(p.Left) == n: // nothing of it was there
		what = fmt.Sprintf("%s: stale, none of its %s is left in %s: record removed", r, devbulk.Plural(n, "device"), in)
	default:
		what = fmt.Sprintf("%s: deleted %d of %d %s links in %s", r, p.Deleted, p.Devices, r.Kind, in)
		if left := describe(p.Left); left != "" {
			what += "; " + left
		}
		for _, l := range p.Left {
			if l.RenamedTo != "" {
				what += fmt.Sprintf("; `devbulk delete --netns %s --forget-renamed` drops renamed devices from the record", where)
				break
			}
		}
		if len(sib) > 0 {
			what += "; " + SiblingsGone(sib)
		}
		if len(p.Vanished) > 0 {
			what += "; not devbulk's, gone during the delete: " + strings.Join(p.Vanished, ", ")
		}
	}
	return Cleaned{What: what, Err: err}
}

// describe says what became of the devices a delete did not remove.
func describe(left []batch.Leftover) string {
	var parts []string
	for _, l := range left {
		parts = append(parts, l.String())
	}
	return strings.Join(parts, "; ")
}

// SiblingsGone says, in one line, that devices of other devbulk runs went
// during a delete (see Outcome.Siblings).
func SiblingsGone(names []string) string {
	what := strings.Join(names, ", ")
	if len(names) > 3 {
		what = fmt.Sprintf("%s .. %s", names[0], names[len(names)-1])
	}
	return fmt.Sprintf("%s of other devbulk runs went meanwhile (their own delete or cleanup): %s", devbulk.Plural(len(names), "device"), what)
}
