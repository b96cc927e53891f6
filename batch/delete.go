package batch

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vishvananda/netns"

	"github.com/devbulk/devbulk/devices"
	"github.com/devbulk/devbulk/nlbatch"
)

// Target is the namespace a set lives in.
type Target struct {
	Conn *nlbatch.Conn
	// NS is the namespace Conn is bound to: the parallel strategy opens
	// more sockets there, and other named namespaces are scanned for
	// devices on the set's. Zero or negative (netns.None()): no scan of
	// other namespaces, and no parallel strategy.
	NS netns.NsHandle
	// Dedicated is set when the namespace is devbulk's own, made for this
	// set (the netns strategy releases it).
	Dedicated *Namespace
}

// UnloadedKind is the kind whose module the module strategy unloads: the
// run's own kind, or with unloadLower (DeleteOptions.UnloadLower) the kind
// of its lower devices.
func UnloadedKind(kind, lower *devices.Kind, unloadLower bool) *devices.Kind {
	if unloadLower {
		return lower
	}
	return kind
}

// DeleteOptions tune Delete.
type DeleteOptions struct {
	Workers int // parallel strategy; default 4
	// UnloadLower makes the module strategy unload the module of the lower
	// devices devbulk created (rmmod dummy under a thousand vlans) rather
	// than the kind's own.
	UnloadLower bool
	// KeepLowers leaves the lower devices a module unload did not take
	// (those of another kind) in place; otherwise they are deleted after the
	// phase. A bench keeps them: its namespace's release removes them, after
	// the phase's RCU counts are read.
	KeepLowers bool
	// Progress, when set, receives the number of devices (lower devices
	// included) deleted so far out of total by the one-by-one strategies
	// (serial, pipelined, parallel).
	Progress func(deleted, total int)
	// BeforeFirst, when set, is called once before the first request that
	// changes anything (runs marks its record "deleting" there): by the
	// group strategy right before the look that answers its checks, by the
	// others after the checks. Its error stops the delete. Delete may still
	// refuse after it: Phase.Acted then reports that nothing was sent.
	BeforeFirst func() error
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
// (Left), and leaves those still present in s.Links and s.Lowers.
func Delete(ctx context.Context, t Target, s *Set, d DeleteStrategy, o DeleteOptions) (Phase, error) {
	if d == DeleteAuto {
		d = DeleteGroup
	}
	p := Phase{Name: "delete", Tool: "devbulk", Strategy: string(d), Devices: len(s.Links)}
	if err := d.Applies(s.Kind, t.Dedicated != nil); err != nil {
		return p, err
	}
	if d == DeleteNetns {
		err := deleteNetns(ctx, t, &p)
		p.Deleted = p.Devices
		return p, err
	}
	mod := s.Kind
	switch d {
	case DeleteModule:
		if mod = UnloadedKind(s.Kind, s.LowerKind, o.UnloadLower); o.UnloadLower && (mod == nil || len(s.Lowers) == 0) {
			return p, fmt.Errorf("unloading the lower devices' module: devbulk created no lower devices")
		}
		p.Module = mod.Module
		if err := ModuleLoaded(mod); err != nil {
			return p, err
		}
	case DeleteLower:
		if len(s.Lowers) == 0 {
			return p, fmt.Errorf("%w: delete strategy lower: the %s links sit on lower devices devbulk did not create; deleting those is not devbulk's call", ErrNotApplicable, s.Kind.Name)
		}
	case DeleteParallel:
		if t.NS <= 0 && t.NS != nlbatch.CurrentNetns {
			return p, fmt.Errorf("%w: the parallel strategy needs the namespace (Target.NS) to open its sockets in", ErrNotApplicable)
		}
	}
	if len(s.Links) == 0 && len(s.Lowers) == 0 {
		// A run killed while creating recorded no ifindexes yet.
		if err := s.Adopt(t.Conn); err != nil {
			return p, err
		}
		p.Devices = len(s.Links)
	}
	// Devices in other named namespaces on any recorded device: a scan of
	// each, done before the last look here so that nothing but the checks
	// separates that look from the first request.
	away, err := s.dependentsAway(t)
	if err != nil {
		return p, err
	}
	// mark runs BeforeFirst once (runs marks its record "deleting"); first
	// does it too, and notes that a request that changes devices is about
	// to go.
	mark := sync.OnceValue(func() error {
		if o.BeforeFirst == nil {
			return nil
		}
		return o.BeforeFirst()
	})
	first := sync.OnceValue(func() error {
		if err := mark(); err != nil {
			return err
		}
		p.acted = true
		return nil
	})
	var m meter
	if d == DeleteGroup {
		// One request deletes the lot: the record is marked before the
		// look, so that one dump answers every check right before it;
		// the phase starts at that look, as at the others' lookups.
		if err := mark(); err != nil {
			return p, err
		}
		m = startMeter()
	}
	// One dump answers the checks when it is consistent; the one-by-one
	// strategies look again right before each request window. (A watch of
	// the link notifications cannot stand in for that look: the kernel
	// announces a group change only for a device that is up.)
	sn, err := takeSnapshot(t.Conn)
	if err != nil {
		return p, err
	}
	mine, gone, err := s.check(ctx, t.Conn, sn, s.owner(), s.all())
	if err != nil {
		return p, err
	}
	before, err := s.refuseDependents(t.Conn, sn, mine, away)
	if err != nil {
		return p, err
	}
	// Of the scan, only the devices that are not the run's are kept, to
	// tell afterwards which of them vanished (100 000 links are ~8 MB).
	others := notOurs(before, indexes(append(s.all(), s.peers(mine, before)...)))
	if d != DeleteGroup {
		before = nil
		m = startMeter()
	}
	var confirmed map[int32]bool
	switch d {
	case DeleteSerial, DeletePipelined:
		confirmed, err = deleteEach(ctx, t.Conn, s, mine, window(d), progressFrom(o.Progress, 0, len(mine)), first, &p)
	case DeleteParallel:
		uppers, lowers := s.split(mine)
		confirmed, err = deleteParallel(ctx, t, s, uppers, o.Workers, progressFrom(o.Progress, 0, len(mine)), first, &p)
		if err == nil && len(lowers) > 0 && ctx.Err() == nil {
			// Only once every upper is gone: a lower device takes its
			// uppers along, under the other workers' feet.
			var more map[int32]bool
			more, err = deleteEach(ctx, t.Conn, s, lowers, 1, progressFrom(o.Progress, len(uppers), len(mine)), first, &p)
			maps.Copy(confirmed, more)
		}
	case DeleteGroup:
		confirmed, err = deleteGroup(ctx, t.Conn, s, mine, before, first, &p)
		before = nil
	case DeleteLower:
		confirmed, err = deleteLowers(ctx, t.Conn, s, mine, first, &p)
	case DeleteModule:
		confirmed, err = deleteModule(s, mod, mine, t.NS, first, &m)
	}
	m.stop(&p)
	if err == nil && d == DeleteModule && !o.UnloadLower && !o.KeepLowers && len(s.Lowers) > 0 {
		// The lower devices are of another kind; the unload left them.
		_, lowers := s.split(mine)
		var q Phase
		var more map[int32]bool
		more, err = deleteEach(context.WithoutCancel(ctx), t.Conn, s, lowers, 0, nil, first, &q)
		maps.Copy(confirmed, more)
	}
	after, serr := takeSnapshot(t.Conn)
	if serr == nil {
		serr = s.settle(t.Conn, after, confirmed, gone, &p)
	}
	if serr != nil {
		return p, errors.Join(err, serr)
	}
	if t.Dedicated == nil {
		var verr error
		if p.Vanished, verr = vanished(t.Conn, after, others); verr != nil {
			return p, errors.Join(err, verr)
		}
	}
	if err != nil {
		return p, err
	}
	if ctx.Err() != nil {
		return p, ctx.Err()
	}
	kept := map[int32]bool{} // lower devices a module unload leaves on purpose
	if d == DeleteModule && o.KeepLowers {
		kept = indexes(s.Lowers)
	}
	if still := p.present(kept); len(still) > 0 {
		return p, fmt.Errorf("%w: %d recorded devices: %s", ErrSurvivors, len(still), nameList(still))
	}
	return p, nil
}

// Refusal returns why Delete would refuse to touch s (devices of others
// that depend on the set's), or nil: for callers that delete several sets
// and must refuse before deleting any.
func Refusal(ctx context.Context, t Target, s *Set) error {
	away, err := s.dependentsAway(t)
	if err != nil {
		return err
	}
	sn, err := takeSnapshot(t.Conn)
	if err != nil {
		return err
	}
	mine, _, err := s.check(ctx, t.Conn, sn, s.owner(), s.all())
	if err != nil {
		return err
	}
	_, err = s.refuseDependents(t.Conn, sn, mine, away)
	return err
}

// refuseDependents fails when devices devbulk did not create depend on the
// set's: here, in snapshot sn (or a scan, without one), or among away (found
// in other named namespaces by dependentsAway) on one of mine or their veth
// peers. It returns the namespace's links as it scanned them.
func (s *Set) refuseDependents(c *nlbatch.Conn, sn *snapshot, mine []nlbatch.Link, away []dependent) ([]nlbatch.Link, error) {
	all, err := scan(c, sn)
	if err != nil {
		return nil, err
	}
	foreign := s.foreignDependents(mine, all)
	ours := indexes(append(mine, s.peers(mine, all)...))
	for _, d := range away {
		if ours[d.on] {
			foreign = append(foreign, d.name)
		}
	}
	if len(foreign) > 0 {
		return nil, fmt.Errorf("refusing to delete: %w: %s", ErrForeignDependents, nameList(foreign))
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

// settle finds every recorded device after a delete (in snapshot sn, or by
// a lookup each when it is nil): those confirmed
// deleted (their request, or the batch that named them, was ACKed) and now
// absent count as Deleted; the others are Left, with what became of them.
// Devices still present stay in the set.
func (s *Set) settle(c *nlbatch.Conn, sn *snapshot, confirmed map[int32]bool, gone []Leftover, p *Phase) error {
	goneIdx := map[int32]bool{}
	stayed := map[int32]bool{}
	for _, g := range gone {
		goneIdx[g.Link.Index] = true
		stayed[g.Link.Index] = g.Present // renamed before the delete: still the run's
	}
	rest := slices.DeleteFunc(s.all(), func(l nlbatch.Link) bool { return goneIdx[l.Index] })
	isLower := indexes(s.Lowers)
	left, deleted := gone, 0
	// One device at a time, as the lookups are read: after a delete of
	// 100 000 there is nothing to list but what is left. The phase is
	// changed only once every device was found or not.
	err := s.each(context.Background(), c, sn, s.owner(), rest, func(now nlbatch.Link, lo *Leftover) {
		switch {
		case lo == nil:
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
			left = append(left, *lo)
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
	p.Settled = true
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

func window(d DeleteStrategy) int {
	if d == DeletePipelined {
		return 0
	}
	return 1
}

// progressFrom reports a call's count as base+n of total, or is nil.
func progressFrom(progress func(done, total int), base, total int) func(int) {
	if progress == nil {
		return nil
	}
	return func(n int) { progress(base+n, total) }
}

// deleteEach deletes devices one RTM_DELLINK each, window per sendmsg (0:
// the Conn's). Right before each window, its devices are looked up again;
// only those still the set's are named. It returns the ifindexes the kernel
// confirmed deleted and reports the count handled so far to progress.
func deleteEach(ctx context.Context, c *nlbatch.Conn, s *Set, devs []nlbatch.Link, window int, progress func(int), first func() error, p *Phase) (map[int32]bool, error) {
	confirmed, res, err := deleteWindows(ctx, c, s, devs, window, progress, first, p)
	if window == 1 && p.Requests == nil {
		// Per request only where each has its own sendmsg; the first
		// call's devices are the phase's (lower devices come after).
		p.Requests = latencies(res)
	}
	return confirmed, err
}

// deleteWindows is deleteEach without the latency summary: it returns the
// delete requests' results.
func deleteWindows(ctx context.Context, c *nlbatch.Conn, s *Set, devs []nlbatch.Link, window int, progress func(int), first func() error, p *Phase) (map[int32]bool, []nlbatch.Result, error) {
	if window <= 0 {
		window = c.Window()
	}
	confirmed := map[int32]bool{}
	var all []nlbatch.Result
	owns := s.owner() // once: it indexes the whole set, and serial has a window per device
	for i := 0; i < len(devs) && ctx.Err() == nil; i += window {
		batch := devs[i:min(i+window, len(devs))]
		mine, _, err := s.check(ctx, c, nil, owns, batch)
		if err != nil {
			return confirmed, all, err
		}
		if len(mine) > 0 {
			if err := first(); err != nil {
				return confirmed, all, err
			}
		}
		reqs := make([][]byte, len(mine))
		for j, l := range mine {
			reqs[j] = nlbatch.DelLinkRequest(l.Index)
		}
		res, st, err := c.Execute(ctx, reqs, window)
		p.noteStats(st)
		if err != nil {
			return confirmed, all, err
		}
		settleDeletes(mine, res, confirmed, p)
		all = append(all, res...)
		if progress != nil {
			progress(i + len(batch))
		}
	}
	return confirmed, all, nil
}

// settleDeletes records what the kernel confirmed and the failures. A
// request whose ACK was lost was executed but may have been refused: it
// counts as confirmed here, and settle afterwards decides (a device
// still there is left, not deleted).
func settleDeletes(devs []nlbatch.Link, res []nlbatch.Result, confirmed map[int32]bool, p *Phase) {
	for i, r := range res {
		switch {
		case !r.Sent:
		case r.Err == nil, errors.Is(r.Err, nlbatch.ErrAckLost):
			confirmed[devs[i].Index] = true
		default:
			p.noteErrors(wrapName(devs[i].Name, r.Err))
		}
	}
}

func wrapName(name string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", name, err)
}

// deleteParallel splits devs over workers, each deleting one by one on its
// own socket.
func deleteParallel(ctx context.Context, t Target, s *Set, devs []nlbatch.Link, workers int, progress func(int), first func() error, p *Phase) (map[int32]bool, error) {
	if workers <= 0 {
		workers = 4
	}
	workers = min(workers, max(1, len(devs)))
	conns := make([]*nlbatch.Conn, workers)
	for w := range conns {
		c, err := nlbatch.Dial(t.NS, nlbatch.Options{})
		if err != nil {
			return nil, err
		}
		defer c.Close()
		conns[w] = c
	}
	var handled atomic.Int64
	phases := make([]Phase, workers)
	confirmed := make([]map[int32]bool, workers)
	results := make([][]nlbatch.Result, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Worker w takes every workers-th device.
			var mine []nlbatch.Link
			for i := w; i < len(devs); i += workers {
				mine = append(mine, devs[i])
			}
			prev := 0
			count := func(n int) {
				if progress != nil {
					progress(int(handled.Add(int64(n - prev))))
				}
				prev = n
			}
			confirmed[w], results[w], errs[w] = deleteWindows(ctx, conns[w], s, mine, 1, count, first, &phases[w])
		}()
	}
	wg.Wait()
	all := map[int32]bool{}
	var res []nlbatch.Result
	for w := range phases {
		maps.Copy(all, confirmed[w])
		p.merge(&phases[w])
		res = append(res, results[w]...)
	}
	p.Requests = latencies(res)
	return all, errors.Join(errs...)
}

// deleteGroup deletes the set in one RTM_DELLINK by group, all being the
// namespace's links as the last look before it saw them. When the run's
// group does not hold exactly the set's devices (someone moved a device into
// it, or an earlier group delete was interrupted half-way through marking),
// it marks the set with a fresh group first (pipelined RTM_SETLINK), saved
// beforehand, and checks the mark before sweeping.
func deleteGroup(ctx context.Context, c *nlbatch.Conn, s *Set, mine, all []nlbatch.Link, first func() error, p *Phase) (map[int32]bool, error) {
	if len(mine) == 0 {
		return nil, nil
	}
	if err := first(); err != nil {
		return nil, err
	}
	group := s.Group
	if !s.holdsExactly(all, group, mine) {
		group = FreshGroup(all, nil)
		s.Marks = append(s.Marks, group)
		if s.Persist != nil {
			if err := s.Persist(); err != nil {
				return nil, fmt.Errorf("saving the new group before marking: %w", err)
			}
		}
		// Look the devices up again right before marking them.
		var err error
		if mine, _, err = s.check(ctx, c, nil, s.owner(), mine); err != nil {
			return nil, err
		}
		reqs := make([][]byte, len(mine))
		for i, l := range mine {
			reqs[i] = nlbatch.SetGroupRequest(l.Index, group)
		}
		res, st, err := c.Execute(ctx, reqs, 0)
		p.noteStats(st)
		if err != nil {
			return nil, err
		}
		for i, r := range res {
			if r.Err != nil {
				return nil, fmt.Errorf("marking %s with group %d: %w", mine[i].Name, group, r.Err)
			}
		}
		now, err := c.ScanLinks()
		if err != nil {
			return nil, err
		}
		if !s.holdsExactly(now, group, mine) {
			return nil, fmt.Errorf("group %d holds %d devices after marking %d: refusing to delete by group", group, members(now, group), len(mine))
		}
	}
	// A lost ACK: the kernel executed the request; settle decides.
	if err := c.Do(ctx, nlbatch.DelGroupRequest(group)); err != nil && !errors.Is(err, nlbatch.ErrAckLost) {
		return nil, fmt.Errorf("delete group %d: %w", group, err)
	}
	return indexes(mine), nil
}

// holdsExactly reports whether group holds devs and nothing else in links:
// each member is one of devs and still the set's (ifindex, name, group).
func (s *Set) holdsExactly(links []nlbatch.Link, group uint32, devs []nlbatch.Link) bool {
	want := indexes(devs)
	owns := s.owner()
	seen := map[int32]bool{}
	for _, l := range links {
		if l.Group == group {
			if !want[l.Index] || !owns(l) {
				return false
			}
			seen[l.Index] = true
		}
	}
	return len(seen) == len(devs)
}

func members(links []nlbatch.Link, group uint32) int {
	n := 0
	for _, l := range links {
		if l.Group == group {
			n++
		}
	}
	return n
}

// deleteLowers deletes the lower devices devbulk created (those of mine); the
// kernel unregisters their upper links in the same batch.
func deleteLowers(ctx context.Context, c *nlbatch.Conn, s *Set, mine []nlbatch.Link, first func() error, p *Phase) (map[int32]bool, error) {
	uppers, lowers := s.split(mine)
	confirmed, err := deleteEach(ctx, c, s, lowers, 0, nil, first, p)
	for _, u := range uppers {
		if confirmed[u.Parent] {
			confirmed[u.Index] = true // went with its lower device
		}
	}
	return confirmed, err
}

// deleteNetns releases the dedicated namespace and waits until the kernel
// has freed it.
func deleteNetns(ctx context.Context, t Target, p *Phase) error {
	t.Dedicated.Settle()
	m := startMeter()
	t.Dedicated.Release()
	released := time.Since(m.start)
	wctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	done, err := t.Dedicated.WaitFreed(wctx)
	m.stop(p) // user and sys are devbulk's polling; the work is the kernel worker's
	p.ReleaseNS = released.Nanoseconds()
	if err != nil {
		// Released: the kernel will finish, but when is unknown.
		p.WallNS, p.DevicesPerSec, p.MsPerDevice = 0, 0, 0
		p.noteErrors(fmt.Errorf("drain not measured: %w", err))
		return nil
	}
	p.DrainMethod = FreedMethod
	p.DrainNS = done.Sub(m.start).Nanoseconds()
	p.WallNS = p.DrainNS
	p.FillRates()
	return nil
}
