package batch

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/devbulk/devbulk/namespace"
	"github.com/devbulk/devbulk/nlbatch"
)

// Target is the namespace a set lives in.
type Target struct {
	Conn *nlbatch.Conn
	// NS is the namespace Conn is bound to: the parallel strategy opens
	// more sockets there, and other named namespaces are scanned for
	// devices on the set's (unless Dialer is set). A handle zero or
	// negative (netns.None()): no scan of other namespaces, and no
	// parallel strategy.
	NS namespace.NS
	// Dialer, when set, opens those sockets instead of NS: a fake kernel
	// reaches the parallel strategy and the scans through it.
	Dialer Dialer
	// Dedicated is set when the namespace is devbulk's own, made for this
	// set (the netns strategy releases it).
	Dedicated *namespace.Dedicated
}

// DeleteOptions tune Delete.
type DeleteOptions struct {
	// Own is the strategy's own options (ParallelOptions, ModuleOptions),
	// defined in its file; nil: its defaults. Options of another strategy
	// are refused.
	Own Own
	// Cycle says the delete is one cycle of a repeated measurement (a
	// bench's) in a namespace released right after: a strategy leaves
	// what that release removes and undoes what would outlive it. The
	// module strategy keeps the lower devices of another kind (the release
	// removes them, after the phase's RCU counts are read; otherwise they
	// are deleted after the phase) and loads the module again, outside the
	// phase, whatever happened (the next cycle creates the kind again).
	Cycle bool
	// Progress, when set, receives the number of devices (lower devices
	// included) deleted so far out of total by the one-by-one strategies
	// (serial, pipelined, parallel).
	Progress func(deleted, total int)
	// Ledger is told before the first request that changes anything
	// (runs marks its record "deleting"), and keeps a group strategy's new
	// mark before the devices move (nil: nowhere).
	Ledger Ledger
}

// Own is one strategy's own options; each strategy that has some defines
// its type in its file. Strategy names the strategies (delete or move)
// that take them.
type Own interface{ Strategy() string }

// ownFor refuses options that belong to another strategy than name.
func ownFor(o Own, name string) error {
	if o != nil && o.Strategy() != name {
		return fmt.Errorf("options of the %s strategy given to the %s strategy", o.Strategy(), name)
	}
	return nil
}

// OwnFor picks, of several strategies' options, those of the strategy
// named name (nil: none given): a caller running several strategies (a
// bench) holds each one's options.
func OwnFor(all []Own, name string) Own {
	for _, o := range all {
		if o != nil && o.Strategy() == name {
			return o
		}
	}
	return nil
}

// ErrForeignDependents reports devices devbulk did not create that depend on
// devices it did: deleting devbulk's would delete or change them.
var ErrForeignDependents = errors.New("devices devbulk did not create depend on devbulk's and would go with them")

// Delete tears the set down with strategy d and measures the phase. Only the
// set's devices are ever named in a request, and each is looked up again
// (ifindex, name, group) right before the window of requests that names it.
// A group delete checks, in the one dump right before its request, that
// the group holds nothing else and that nothing of others sits on the
// set's devices. Before anything is deleted, devices of others that sit on
// the set's (in this namespace or, by IFLA_LINK_NETNSID, in another named
// one) make Delete refuse. Afterwards every recorded device is looked up: the phase counts
// what the kernel confirmed deleted (Deleted), says what became of the rest
// (Left), and leaves those still present in s.Links and s.Lowers. The
// Outcome says what a caller keeping records decides on.
func Delete(ctx context.Context, t Target, s *Set, d DeleteStrategy, o DeleteOptions) (Phase, Outcome, error) {
	p := Phase{Name: "delete", Tool: "devbulk", Strategy: string(d), Devices: len(s.Links)}
	if l, ok := o.Own.(interface{ Label() string }); ok {
		p.Strategy = l.Label() // a windowed group delete: "group-w500"
	}
	if err := d.Ready(t, s, o); err != nil {
		return p, Outcome{}, err
	}
	del := newJob(t, s, o, &p)
	err := d.impl().tearDown(ctx, del)
	return p, del.out, err
}

// Outcome is what a delete did beside its phase (the result row): what a
// caller that keeps records decides on.
type Outcome struct {
	// Settled says that every recorded device was looked up after the
	// phase, so Deleted and Left are complete (and the set holds just the
	// devices still present). Not set when the delete stopped before that.
	Settled bool
	// Acted says a request that changes devices was sent (a delete, a
	// group mark, an unload). A delete that did not left the set as it was,
	// whatever its error: refused, or stopped before its first request.
	Acted bool
}

// run deletes d.mine and returns the ifindexes the kernel confirmed
// deleted.
type run func(ctx context.Context, d *job) (map[int32]bool, error)

// afterLook is the tear-down of a strategy that sends requests device by
// device: a look, run, and the settling of what the kernel did. The phase
// starts after the look.
func afterLook(r run) func(context.Context, *job) error {
	return func(ctx context.Context, d *job) error { return d.delete(ctx, false, r) }
}

// markedFirst is the tear-down of a strategy whose one request deletes the
// lot (group): the record is marked before the look that answers every
// check, and the phase starts at that look.
func markedFirst(r run) func(context.Context, *job) error {
	return func(ctx context.Context, d *job) error { return d.delete(ctx, true, r) }
}

// delete looks, runs the strategy and settles what the kernel did.
func (d *job) delete(ctx context.Context, markFirst bool, r run) error {
	t, s, p := d.t, d.s, d.p
	others, gone, err := d.look(ctx, markFirst)
	if err != nil {
		return err
	}
	confirmed, err := r(ctx, d)
	d.stop()
	after, serr := takeSnapshot(t.Conn, 0)
	if serr == nil {
		serr = s.settle(lookup{t.Conn, after, d.ownership()}, confirmed, gone, p)
	}
	if serr != nil {
		return errors.Join(err, serr)
	}
	d.out.Settled = true
	if t.Dedicated == nil {
		var verr error
		if p.Vanished, verr = vanished(t.Conn, after, others); verr != nil {
			return errors.Join(err, verr)
		}
	}
	if err != nil {
		return err
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if still := p.present(d.kept); len(still) > 0 {
		return fmt.Errorf("%w: %d recorded devices: %s", ErrSurvivors, len(still), nameList(still))
	}
	return nil
}

// job is one Delete or Move under way over a set, what a strategy's run
// works from: the look right before each window of requests, the requests
// (a delete, or a move: request), the marking, the settling.
type job struct {
	t Target
	s *Set
	o DeleteOptions
	p *Phase
	// mine is the set's devices as the last look found them.
	mine []nlbatch.Link
	// For a strategy that marks first, what the last look saw of the
	// namespace (not its links: 200 000 are 17 MB): whether the set's group
	// held exactly mine, and the groups in use.
	exact bool
	used  map[uint32]bool
	// kept is the devices left in place on purpose (not survivors).
	kept map[int32]bool
	// owns is the set's ownership test, made once at the look (it indexes
	// every device of the set, which does not change until settle).
	owns    func(nlbatch.Link) bool
	m       meter
	stopped bool
	out     Outcome
	// request is the request a one-by-one strategy sends for each device:
	// its delete, or (Move) its move.
	request func(nlbatch.Link) []byte
	// mark tells the ledger once (runs marks its record "deleting");
	// first does it too, and notes that a request that changes devices is
	// about to go. Both are safe from several goroutines.
	mark, first func() error
}

func newJob(t Target, s *Set, o DeleteOptions, p *Phase) *job {
	d := &job{t: t, s: s, o: o, p: p, request: func(l nlbatch.Link) []byte { return nlbatch.DelLinkRequest(l.Index) }}
	d.mark = sync.OnceValue(ledgerOr(o.Ledger).Deleting)
	d.first = sync.OnceValue(func() error {
		if err := d.mark(); err != nil {
			return err
		}
		d.out.Acted = true
		return nil
	})
	return d
}

// look adopts the set's devices when none were recorded, scans for devices
// of others that depend on them, and finds which are still the set's. It
// returns the namespace's other devices (to tell afterwards which
// vanished) and the recorded devices no longer the set's. The phase starts
// at that look when the strategy marks first, after it otherwise.
func (d *job) look(ctx context.Context, markFirst bool) (others []nlbatch.Link, gone []Leftover, err error) {
	t, s := d.t, d.s
	if len(s.Links) == 0 && len(s.Lowers) == 0 {
		// A run killed while creating recorded no ifindexes yet.
		if err := s.Adopt(t.Conn); err != nil {
			return nil, nil, err
		}
		d.p.Devices = len(s.Links)
	}
	// Devices in other named namespaces on any recorded device: a scan of
	// each, done before the last look here so that nothing but the checks
	// separates that look from the first request.
	away, err := s.dependentsAway(t)
	if err != nil {
		return nil, nil, err
	}
	if markFirst {
		if err := d.mark(); err != nil {
			return nil, nil, err
		}
		d.m = startMeter()
	}
	// One dump answers the checks when it is consistent; the one-by-one
	// strategies look again right before each request window. (A watch of
	// the link notifications cannot stand in for that look: the kernel
	// announces a group change only for a device that is up.)
	sn, err := takeSnapshot(t.Conn, len(s.Links)+len(s.Lowers))
	if err != nil {
		return nil, nil, err
	}
	lk := lookup{t.Conn, sn, s.owner()}
	d.owns = lk.owns
	if d.mine, gone, err = s.check(ctx, lk, s.all()); err != nil {
		return nil, nil, err
	}
	all, err := s.refuseDependents(lk, d.mine, away, d.p.Name)
	if err != nil {
		return nil, nil, err
	}
	// Of the scan, only the devices that are not the run's are kept
	// (100 000 links are ~8 MB).
	ours := indexes(s.all())
	for _, p := range s.peers(d.mine, all) {
		ours[p.Index] = true
	}
	others = notOurs(all, ours)
	if markFirst {
		d.exact, d.used = s.holdsExactly(all, s.Group, d.mine, lk.owns), groups(all)
	} else {
		d.m = startMeter()
	}
	return others, gone, nil
}

// ownership is the set's ownership test made at the look (made now when
// there was none).
func (d *job) ownership() func(nlbatch.Link) bool {
	if d.owns == nil {
		d.owns = d.s.owner()
	}
	return d.owns
}

// restart starts the phase's clock again (a module unload times the unload
// alone, not the safety scan before it).
func (d *job) restart() { d.m = startMeter() }

// stop ends the phase's clock, once.
func (d *job) stop() {
	if !d.stopped {
		d.m.stop(d.p)
		d.stopped = true
	}
}

// Refusal returns why Delete would refuse to touch s (devices of others
// that depend on the set's), or nil: for callers that delete several sets
// and must refuse before deleting any.
func Refusal(ctx context.Context, t Target, s *Set) error {
	away, err := s.dependentsAway(t)
	if err != nil {
		return err
	}
	sn, err := takeSnapshot(t.Conn, len(s.Links)+len(s.Lowers))
	if err != nil {
		return err
	}
	lk := lookup{t.Conn, sn, s.owner()}
	mine, _, err := s.check(ctx, lk, s.all())
	if err != nil {
		return err
	}
	_, err = s.refuseDependents(lk, mine, away, "delete")
	return err
}

// refuseDependents fails when devices devbulk did not create depend on the
// set's: here, in lk's snapshot (or a scan, without one), or among away
// (found in other named namespaces by dependentsAway) on one of mine or
// their veth peers; verb ("delete", "move") says what it refuses. It
// returns the namespace's links as it scanned them.
func (s *Set) refuseDependents(lk lookup, mine []nlbatch.Link, away []dependent, verb string) ([]nlbatch.Link, error) {
	all, err := scan(lk.c, lk.sn)
	if err != nil {
		return nil, err
	}
	ours := s.ours(mine, all)
	foreign := dependentsOf(all, ours, lk.owns)
	peers := awayPeers(mine)
	for _, d := range away {
		if d.foreignTo(ours, peers) {
			foreign = append(foreign, d.name)
		}
	}
	slices.Sort(foreign)
	foreign = slices.Compact(foreign)
	if len(foreign) > 0 {
		return nil, fmt.Errorf("refusing to %s: %w: %s", verb, ErrForeignDependents, nameList(foreign))
	}
	return all, nil
}

// notOurs is the links of a scan that are not among ours.
func notOurs(scan []nlbatch.Link, ours map[int32]bool) []nlbatch.Link {
	var out []nlbatch.Link
	for _, l := range scan {
		if !ours[l.Index] {
			out = append(out, l)
		}
	}
	return out
}

// vanished names the devices of others (those of the scan at the start
// that were not the run's) that are gone now: the residual risk docs/safety.md
// names (someone moved a device into the run's group between the check and
// the group delete) shows up here, beside deletes done by others meanwhile.
func vanished(c *nlbatch.Conn, sn *snapshot, others []nlbatch.Link) ([]string, error) {
	after, err := scan(c, sn)
	if err != nil {
		return nil, fmt.Errorf("after the delete: %w", err)
	}
	now := indexes(after)
	var out []string
	for _, l := range others {
		if !now[l.Index] {
			out = append(out, l.Name)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// settle finds every recorded device after a delete (through lk: in its
// snapshot, or by a lookup each when it has none): those confirmed
// deleted (their request, or the batch that named them, was ACKed) and now
// absent count as Deleted; the others are Left, with what became of them.
// Devices still present stay in the set.
func (s *Set) settle(lk lookup, confirmed map[int32]bool, gone []Leftover, p *Phase) error {
	goneIdx := map[int32]bool{}
	stayed := map[int32]bool{}
	for _, g := range gone {
		goneIdx[g.Link.Index] = true
		stayed[g.Link.Index] = g.Present // renamed before the delete: still the run's
	}
	rest := s.all()
	if len(gone) > 0 { // a new slice: all may be s.Links itself
		rest = slices.DeleteFunc(slices.Clone(rest), func(l nlbatch.Link) bool { return goneIdx[l.Index] })
	}
	isLower := indexes(s.Lowers)
	left, deleted := gone, 0
	// One device at a time, as the lookups are read: after a delete of
	// 100 000 there is nothing to list but what is left. The phase is
	// changed only once every device was found or not.
	err := s.each(context.Background(), lk, rest, func(now nlbatch.Link, lo Leftover, owned bool) {
		switch {
		case owned:
			stayed[now.Index] = true
			left = append(left, Leftover{Link: now, Present: true, Why: "not deleted"})
		case !lo.Present && confirmed[lo.Link.Index]:
			if !isLower[lo.Link.Index] {
				deleted++
			}
		default:
			if lo.Present {
				stayed[lo.Link.Index] = true
			}
			left = append(left, lo)
		}
	})
	if err != nil {
		return err
	}
	p.Left, p.Deleted = left, deleted
	keep := func(ls []nlbatch.Link) []nlbatch.Link {
		return slices.DeleteFunc(ls, func(l nlbatch.Link) bool { return !stayed[l.Index] })
	}
	s.Links, s.Lowers = keep(s.Links), keep(s.Lowers)
	p.Failed = p.Devices - p.Deleted
	p.FillRates()
	return nil
}

// present lists the leftovers still in the namespace, but those of except.
func (p *Phase) present(except map[int32]bool) []string {
	var out []string
	for _, l := range p.Left {
		if l.Present && !except[l.Link.Index] {
			out = append(out, l.String())
		}
	}
	return out
}

func indexes(devs []nlbatch.Link) map[int32]bool {
	m := make(map[int32]bool, len(devs))
	for _, l := range devs {
		m[l.Index] = true
	}
	return m
}

// progressFrom reports a call's count as base+n of total, or is nil.
func progressFrom(progress func(done, total int), base, total int) func(int) {
	if progress == nil {
		return nil
	}
	return func(n int) { progress(base+n, total) }
}
