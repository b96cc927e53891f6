package runs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/devbulk/devbulk"
	"github.com/devbulk/devbulk/batch"
	"github.com/devbulk/devbulk/nlbatch"
)

// dyingWait bounds how long Cleanup waits for a killed devbulk to finish
// the request it had in the kernel (a group move of thousands of veths: a
// few seconds).
const dyingWait = 2 * time.Minute

// Cleaned is one thing Cleanup did, or could not do.
type Cleaned struct {
	What string // for people: what was found and done
	Err  error
}

// Cleanup removes what killed devbulk runs left: the devices of every run
// whose devbulk is gone and that was still creating, deleting or moving
// (a move's on both sides, until they are gone: Record.Abandoned; with all,
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
		if r.Owner.Dying() {
			// Killed, and still finishing a request in the kernel: the
			// devices are settled once it returns.
			if err := r.Owner.Wait(dyingWait); err != nil {
				out = append(out, Cleaned{What: fmt.Sprintf("%s: its devbulk (%s) was killed and is still finishing a request in the kernel: not touched; run cleanup again", r, r.Owner), Err: err})
				continue
			}
			now, err := s.reread(r)
			if err != nil {
				out = append(out, Cleaned{What: r.String(), Err: err})
			}
			if now == nil {
				continue // its record is gone, or unreadable
			}
			r = now
		}
		if r.Owner.Alive() {
			continue // a running devbulk's
		}
		both := all || r.Abandoned
		switch r.State {
		case Complete:
			if !both {
				// The user's, until devbulk delete (or --all): only what a
				// namespace that is gone held is pruned.
				out = append(out, s.pruneGone(ctx, r, recs)...)
				continue
			}
		case Moving:
			// Killed while moving: the links are on either side, and go
			// from both.
			r.Abandoned = true
			if err := s.resolveMove(r); err != nil {
				out = append(out, Cleaned{What: r.String(), Err: err})
				continue
			}
			both = true
		}
		out = append(out, s.cleanupRun(ctx, r, recs, both)...)
	}
	return out, nil
}

// cleanupRun deletes a run's devices on its own side and, with both, on the
// other side of a move too.
func (s *Store) cleanupRun(ctx context.Context, r *Record, recs []*Record, both bool) []Cleaned {
	var out []Cleaned
	if both && r.To != nil {
		r.turn()
		c, removed := s.cleanupSide(ctx, r, recs)
		if out = append(out, c); removed {
			return out
		}
		if r.To != nil { // what is left of that side stays recorded there
			r.turn()
		}
	}
	c, _ := s.cleanupSide(ctx, r, recs)
	return append(out, c)
}

// pruneGone drops from a completed run what it had in namespaces that are
// gone (their devices went with them), and its record when nothing is left.
func (s *Store) pruneGone(ctx context.Context, r *Record, recs []*Record) []Cleaned {
	var st staleness
	var out []Cleaned
	if r.To != nil && st.gone(r.To.Place) {
		r.turn()
		c, _ := s.cleanupSide(ctx, r, recs)
		out = append(out, c)
	}
	if st.gone(r.Place) {
		c, _ := s.cleanupSide(ctx, r, recs)
		out = append(out, c)
	}
	return out
}

// cleanupSide deletes the devices of the run on its own side, or drops
// them from the record when that namespace is gone; it reports whether the
// record is gone.
func (s *Store) cleanupSide(ctx context.Context, r *Record, recs []*Record) (Cleaned, bool) {
	ns, ok := recordedNetns(r.Place)
	if !ok {
		if r.To == nil {
			return Cleaned{What: fmt.Sprintf("%s: stale, the namespace is gone (and its devices with it): record removed", r), Err: s.Remove(r)}, true
		}
		gone := r.Netns
		r.Links, r.Lowers, r.State = nil, nil, Complete
		r.settle()
		return Cleaned{What: fmt.Sprintf("%s: netns %s is gone, and the run's devices there with it: dropped from the record", r, gone), Err: s.Save(r)}, false
	}
	defer ns.Close()
	conn, err := nlbatch.Dial(ns.Handle, nlbatch.Options{})
	if err != nil {
		return Cleaned{What: r.String(), Err: err}, false
	}
	defer conn.Close()
	n, name, in, killed := r.here(), r.String(), "netns "+r.Netns, r.State == Deleting
	if ns.Name != r.Netns {
		in = fmt.Sprintf("netns %s (recorded as %s, found by inode)", ns.Name, r.Netns)
	}
	p, removed, _, err := s.deleteSet(ctx, batch.Target{Conn: conn, NS: ns}, r, DeleteOptions{Strategy: batch.DeleteGroup})
	sib := siblings(&p, r, recs)
	if removed && err == nil && p.Deleted == 0 && len(p.Left) == n { // nothing of it was there
		return Cleaned{What: fmt.Sprintf("%s: stale, none of its %s is left in %s: record removed", name, devbulk.Plural(n, "device"), in)}, true
	}
	what := fmt.Sprintf("%s: deleted %d of %d %s links in %s", name, p.Deleted, p.Devices, r.Kind, in)
	left := p.Left
	if killed {
		// What the killed delete's own requests took before it died is
		// gone already: say so, not "by someone else", device by device.
		left = slices.DeleteFunc(slices.Clone(left), batch.Leftover.Gone)
		if gone := len(p.Left) - len(left); gone > 0 {
			what += fmt.Sprintf("; the other %d were gone already: the delete killed mid-way (devbulk pid %d) had got that far", gone, r.Owner.PID)
		}
	}
	if lines := batch.Summarize(left); len(lines) > 0 {
		what += "; " + strings.Join(lines, "; ")
	}
	for _, l := range p.Left {
		if l.RenamedTo != "" {
			what += fmt.Sprintf("; `devbulk delete --netns %s --forget-renamed` drops renamed devices from the record", ns.Name)
			break
		}
	}
	if len(sib) > 0 {
		what += "; " + SiblingsGone(sib)
	}
	if len(p.Vanished) > 0 {
		what += "; not devbulk's, gone during the delete: " + strings.Join(p.Vanished, ", ")
	}
	return Cleaned{What: what, Err: err}, removed
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
