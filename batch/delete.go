package batch

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/devbulk/devbulk/nlbatch"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// Target is the namespace a set lives in.
type Target struct {
	Conn *nlbatch.Conn
	NS   netns.NsHandle
	// Dedicated is set when the namespace is devbulk's own, made for this
	// set (the netns strategy releases it).
	Dedicated *Namespace
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
}

// Delete tears the set down with strategy d and measures the phase. Only the
// set's devices are ever named in a request; a group delete first checks that
// the group holds nothing else. Afterwards the namespace is listed again and
// survivors are reported (not for netns, whose namespace is gone).
func Delete(ctx context.Context, t Target, s *Set, d DeleteStrategy, o DeleteOptions) (Phase, error) {
	if d == DeleteAuto {
		d = DeleteGroup
	}
	p := Phase{Phase: "delete", Tool: "devbulk", Strategy: string(d), Devices: len(s.Links)}
	if err := d.Applies(s.Kind, t.Dedicated != nil); err != nil {
		return p, err
	}
	if d == DeleteNetns {
		return p, deleteNetns(ctx, t, &p)
	}
	mod := s.Kind
	if d == DeleteModule {
		if o.UnloadLower {
			if mod = s.LowerKind; mod == nil || len(s.Lowers) == 0 {
				return p, fmt.Errorf("unloading the lower devices' module: devbulk created no lower devices")
			}
		}
		p.Module = mod.Module
		if err := ModuleLoaded(mod); err != nil {
			return p, err
		}
		foreign, err := ForeignDevices(mod, s, t.NS)
		if err != nil {
			return p, err
		}
		if len(foreign) > 0 {
			return p, fmt.Errorf("refusing to unload %s: it would delete devices devbulk did not create: %s",
				mod.Module, strings.Join(foreign, ", "))
		}
	}
	if len(s.Links) == 0 && len(s.Lowers) == 0 {
		// A run killed while creating recorded no ifindexes yet.
		if err := s.Adopt(t.Conn); err != nil {
			return p, err
		}
		p.Devices = len(s.Links)
	}
	mine, all, err := s.present(t.Conn)
	if err != nil {
		return p, err
	}
	if foreign := s.foreignUppers(all); len(foreign) > 0 {
		return p, fmt.Errorf("refusing to delete: devices devbulk did not create sit on its lower devices and would go with them: %s",
			strings.Join(foreign, ", "))
	}
	m := startMeter()
	switch d {
	case DeleteSerial, DeletePipelined:
		err = deleteEach(ctx, t.Conn, mine, window(d), progressFrom(o.Progress, 0, len(mine)), &p)
	case DeleteParallel:
		uppers, lowers := s.split(mine)
		err = deleteParallel(ctx, t, uppers, o.Workers, progressFrom(o.Progress, 0, len(mine)), &p)
		if err == nil && len(lowers) > 0 {
			// Only once every upper is gone: a lower device takes its
			// uppers along, under the other workers' feet.
			err = deleteEach(ctx, t.Conn, lowers, 1, progressFrom(o.Progress, len(uppers), len(mine)), &p)
		}
	case DeleteGroup:
		err = deleteGroup(ctx, t.Conn, s, mine, all, &p)
	case DeleteLower:
		err = deleteLowers(ctx, t.Conn, s, mine, &p)
	case DeleteModule:
		err = unloadModule(mod)
	}
	m.stop(&p)
	if err != nil {
		return p, err
	}
	if d == DeleteModule && !o.UnloadLower && !o.KeepLowers && len(s.Lowers) > 0 {
		// The lower devices are of another kind; the unload left them.
		var q Phase
		if err := deleteEach(ctx, t.Conn, s.Lowers, 0, nil, &q); err != nil {
			return p, err
		}
	}
	left, _, err := s.present(t.Conn)
	if err != nil {
		return p, err
	}
	if n := countLinks(left, s); n > 0 {
		p.Failed = n
		p.rates()
		return p, fmt.Errorf("%w: %d of %d", ErrSurvivors, n, len(s.Links))
	}
	return p, nil
}

// countLinks counts the upper links (not the lowers) of s among devs.
func countLinks(devs []nlbatch.Link, s *Set) int {
	upper := make(map[int32]bool, len(s.Links))
	for _, r := range s.Links {
		upper[r.Index] = true
	}
	n := 0
	for _, l := range devs {
		if upper[l.Index] {
			n++
		}
	}
	return n
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

// deleteEach deletes devices one RTM_DELLINK each, window per sendmsg,
// reporting the count answered to progress (when not nil).
func deleteEach(ctx context.Context, c *nlbatch.Conn, devs []nlbatch.Link, window int, progress func(int), p *Phase) error {
	reqs := make([][]byte, len(devs))
	for i, l := range devs {
		reqs[i] = nlbatch.DelLinkRequest(l.Index)
	}
	c.Progress = progress
	res, st, err := c.Execute(ctx, reqs, window)
	c.Progress = nil
	p.noteStats(st)
	if err != nil {
		return err
	}
	settleDeletes(c, devs, res, p)
	if window == 1 && p.Requests == nil {
		// Per request only where each has its own sendmsg; the first
		// call's devices are the phase's (lower devices come after).
		p.Requests = latencies(res)
	}
	return nil
}

// settleDeletes records failures; a lost ACK is settled by a lookup.
func settleDeletes(c *nlbatch.Conn, devs []nlbatch.Link, res []nlbatch.Result, p *Phase) {
	for i, r := range res {
		if errors.Is(r.Err, nlbatch.ErrAckLost) {
			if _, err := c.LinkByIndex(devs[i].Index); errors.Is(err, unix.ENODEV) {
				r.Err = nil // gone: deleted
			}
		}
		p.noteErrors(wrapName(devs[i].Name, r.Err))
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
func deleteParallel(ctx context.Context, t Target, devs []nlbatch.Link, workers int, progress func(int), p *Phase) error {
	if workers <= 0 {
		workers = 4
	}
	workers = min(workers, max(1, len(devs)))
	conns := make([]*nlbatch.Conn, workers)
	for w := range conns {
		c, err := nlbatch.Dial(t.NS, nlbatch.Options{})
		if err != nil {
			return err
		}
		defer c.Close()
		conns[w] = c
	}
	if progress != nil {
		var deleted atomic.Int64
		for _, c := range conns {
			prev := 0
			c.Progress = func(n int) { progress(int(deleted.Add(int64(n - prev)))); prev = n }
		}
	}
	results := make([]nlbatch.Result, len(devs))
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Worker w takes every workers-th device.
			var mine []nlbatch.Link
			var idx []int
			for i := w; i < len(devs); i += workers {
				mine, idx = append(mine, devs[i]), append(idx, i)
			}
			reqs := make([][]byte, len(mine))
			for i, l := range mine {
				reqs[i] = nlbatch.DelLinkRequest(l.Index)
			}
			res, _, err := conns[w].Execute(ctx, reqs, 1)
			errs[w] = err
			for i, r := range res {
				results[idx[i]] = r
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	settleDeletes(t.Conn, devs, results, p)
	p.Requests = latencies(results)
	return nil
}

// deleteGroup deletes the set in one RTM_DELLINK by group. When the run's
// group does not hold exactly the set's devices (someone moved a device into
// it, or an earlier group delete was interrupted half-way through marking),
// it marks the set with a fresh group first (pipelined RTM_SETLINK), saved
// beforehand, and checks the mark before sweeping.
func deleteGroup(ctx context.Context, c *nlbatch.Conn, s *Set, mine, all []nlbatch.Link, p *Phase) error {
	if len(mine) == 0 {
		return nil
	}
	group := s.Group
	if members(all, group) != len(mine) {
		group = FreshGroup(all, nil)
		s.Marks = append(s.Marks, group)
		if s.Persist != nil {
			if err := s.Persist(); err != nil {
				return fmt.Errorf("saving the new group before marking: %w", err)
			}
		}
		reqs := make([][]byte, len(mine))
		for i, l := range mine {
			reqs[i] = nlbatch.SetGroupRequest(l.Index, group)
		}
		res, st, err := c.Execute(ctx, reqs, 0)
		p.noteStats(st)
		if err != nil {
			return err
		}
		for i, r := range res {
			if r.Err != nil {
				return fmt.Errorf("marking %s with group %d: %w", mine[i].Name, group, r.Err)
			}
		}
		now, err := c.Links()
		if err != nil {
			return err
		}
		if n := members(now, group); n != len(mine) {
			return fmt.Errorf("group %d holds %d devices after marking %d: refusing to delete by group", group, n, len(mine))
		}
	}
	res, st, err := c.Execute(ctx, [][]byte{nlbatch.DelGroupRequest(group)}, 1)
	p.noteStats(st)
	if err != nil {
		return err
	}
	if err := res[0].Err; err != nil {
		return fmt.Errorf("delete group %d: %w", group, err)
	}
	return nil
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
func deleteLowers(ctx context.Context, c *nlbatch.Conn, s *Set, mine []nlbatch.Link, p *Phase) error {
	if len(s.Lowers) == 0 {
		return fmt.Errorf("delete strategy lower: the %s links sit on lower devices devbulk did not create; deleting those is not devbulk's call", s.Kind.Name)
	}
	_, lowers := s.split(mine)
	return deleteEach(ctx, c, lowers, 0, nil, p)
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
	p.DrainMethod = DrainMethod
	p.DrainNS = done.Sub(m.start).Nanoseconds()
	p.WallNS = p.DrainNS
	p.rates()
	return nil
}
