package faults

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"golang.org/x/sys/unix"

	"github.com/devbulk/devbulk"
	"github.com/devbulk/devbulk/batch"
	"github.com/devbulk/devbulk/devices"
	"github.com/devbulk/devbulk/kernlog"
	"github.com/devbulk/devbulk/namespace"
	"github.com/devbulk/devbulk/nlbatch"
	"github.com/devbulk/devbulk/runs"
)

// Path is a request a sweep fails: the create of a run, its group delete,
// or its group move into another namespace.
type Path string

const (
	Create Path = "create"
	Delete Path = "delete"
	Move   Path = "move"
)

// Paths are the paths a sweep takes. A namespace's release is not one:
// the kernel frees a namespace in its cleanup worker, not in the thread
// that let go of it, and fail-nth fails the calling thread's allocations
// only.
var Paths = []Path{Create, Delete, Move}

// PathsFor are the paths a sweep of kind k can take: not a move of a kind
// the kernel keeps in its namespace (bridge), nor of one with lower
// devices (devbulk does not move a run whose lower devices would stay).
func PathsFor(k *devices.Kind) []Path {
	if k.NetnsLocal || k.NeedsLower {
		return []Path{Create, Delete}
	}
	return Paths
}

// request is the netlink message type of the path's request: the fault
// goes into the first datagram that carries one (for a kind with lower
// devices, the create's is the lower devices').
var request = map[Path]uint16{Create: unix.RTM_NEWLINK, Delete: unix.RTM_DELLINK, Move: unix.RTM_NEWLINK}

// Options describe a sweep.
type Options struct {
	Kind  *devices.Kind
	Lower *devices.Kind // the lower devices' kind, for a kind that needs them (nil: devices.Ready's)
	Count int           // devices a run (its request carries them all)
	Paths []Path
	// MaxN bounds the sweep of a path: a request with more fault points
	// than that is swept to MaxN, and the report says so.
	MaxN  int
	Noise kernlog.Noise
	// Progress, when set, receives one line per step.
	Progress func(string)
}

// Step is one fault injected (or not: the request ran whole).
type Step struct {
	Path Path `json:"path"`
	N    int  `json:"n"`
	// Injected says the kernel failed the request's Nth fault point;
	// false ends the sweep: the request had fewer.
	Injected bool `json:"injected"`
	// Error is the request's error as devbulk reported it ("" when it
	// succeeded: the kernel took the failure in its stride).
	Error string `json:"error,omitempty"`
	// Devbulk says which of devbulk's guarantees failed, Kernel what the
	// kernel could not free; "" when none.
	Devbulk  string            `json:"devbulk,omitempty"`
	Kernel   string            `json:"kernel,omitempty"`
	Findings []kernlog.Finding `json:"findings,omitempty"`
	// Site is where the fault landed: the kernel's stack of the failed
	// allocation, innermost function first (kernlog.Finding.Site).
	Site string `json:"site,omitempty"`
}

// Failed says whether the step broke a guarantee or made the kernel complain.
func (s *Step) Failed() bool { return s.Devbulk != "" || s.Kernel != "" || len(s.Findings) > 0 }

// Report is a sweep's outcome.
type Report struct {
	devbulk.Header
	Kind  string `json:"kind"`
	Count int    `json:"count"`
	MaxN  int    `json:"max_n"`
	Steps []Step `json:"steps"`
	// Unread says why the kernel's log was not read.
	Unread string `json:"kernel_log_unread,omitempty"`
}

// freeDeadline is how long a step's namespace may take to be freed: a
// device whose reference was never put keeps it (the kernel says
// "waiting for … to become free" every 10 s meanwhile).
const freeDeadline = 30 * time.Second

// Sweep runs the sweep of every path, a throwaway namespace and a run
// record of its own for each step.
func Sweep(ctx context.Context, o Options) (*Report, error) {
	if err := setup(); err != nil {
		return nil, err
	}
	// Modules loaded first: a fault in a create the kernel refuses for an
	// unknown kind would be a step of nothing.
	lower, err := devices.Ready(o.Kind)
	if err != nil {
		return nil, err
	}
	if o.Kind.NeedsLower && o.Lower == nil {
		o.Lower = lower
	}
	dir, err := os.MkdirTemp("", "devbulk-faults-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	store, err := runs.Open(dir)
	if err != nil {
		return nil, err
	}
	r := &Report{Header: devbulk.NewHeader(), Kind: o.Kind.Name, Count: o.Count, MaxN: o.MaxN, Unread: kernlog.Watch(nil).Stop().Unread}
	for _, p := range o.Paths {
		for n := 1; n <= o.MaxN && ctx.Err() == nil; n++ {
			st := o.step(ctx, store, p, n)
			r.Steps = append(r.Steps, st)
			if o.Progress != nil {
				o.Progress(fmt.Sprintf("%s N=%d: injected %v, error %q", p, n, st.Injected, st.Error))
			}
			if !st.Injected {
				break
			}
		}
	}
	return r, ctx.Err()
}

// step injects the Nth fault into path p's request, then judges.
func (o Options) step(ctx context.Context, store *runs.Store, p Path, n int) (st Step) {
	st = Step{Path: p, N: n}
	w := kernlog.Watch(o.Noise)
	w.Phase(fmt.Sprintf("%s with fail-nth %d", p, n))
	defer func() { st.Findings, st.Site = split(w.Stop().Findings) }()
	spaces, err := stepSpaces(p)
	if err != nil {
		st.Devbulk = err.Error()
		return st
	}
	sysfs := func(when string) {
		if v := sysfsTrue(spaces); v != "" && st.Kernel == "" {
			st.Kernel = when + v
		}
	}
	// A namespace the kernel allocates where a freed one with a stale
	// entry was inherits it: that is an earlier step's doing.
	sysfs("before the request (an earlier step's): ")
	f := &nlbatch.Fault{Type: request[p], N: n}
	err = o.faulted(ctx, store, p, f, spaces)
	st.Injected = f.Injected
	if f.Err != nil {
		st.Devbulk = "fail-nth: " + f.Err.Error()
	}
	if err != nil {
		st.Error = err.Error()
	}
	switch {
	case errors.Is(err, errNoRun):
		st.Devbulk = err.Error()
	case err != nil && !f.Injected && st.Devbulk == "":
		st.Devbulk = "the request failed with no fault injected"
	}
	if v := recordTrue(store, spaces); v != "" && st.Devbulk == "" {
		st.Devbulk = v
	}
	sysfs("after the request: ")
	if v := finish(ctx, store, spaces); v != "" && st.Devbulk == "" {
		st.Devbulk = v
	}
	sysfs("after devbulk delete: ")
	w.Phase(fmt.Sprintf("after %s with fail-nth %d (the namespaces' release)", p, n))
	for _, s := range spaces {
		if err := s.d.ReleaseAndWait(freeDeadline); err != nil && st.Kernel == "" {
			st.Kernel = fmt.Sprintf("the step's namespace was not freed in %s: %v", freeDeadline, err)
		}
	}
	return st
}

// errNoRun is a delete or move step whose unfaulted create failed: no
// fault was injected, and the step cannot be judged.
var errNoRun = errors.New("creating the run the fault's request is for")

// faulted makes the run and sends path p's request with fault f: into the
// create itself, or into the delete or the move of the run just made.
func (o Options) faulted(ctx context.Context, store *runs.Store, p Path, f *nlbatch.Fault, spaces []*space) error {
	from := spaces[0]
	if p == Create {
		from.conn.InjectFault(f)
	}
	co := batch.CreateOptions{Kind: o.Kind, Lower: o.Lower, Devices: devices.Options{Count: o.Count, Prefix: "dbf"}, Strategy: batch.CreatePipelined, NS: from.d.NS}
	_, _, err := store.Create(ctx, from.conn, co)
	switch {
	case p == Create:
		return err
	case err != nil:
		return fmt.Errorf("%w: %v", errNoRun, err)
	}
	from.conn.InjectFault(f)
	var rep *runs.Report
	if p == Delete {
		rep, err = store.Delete(ctx, from.conn, runs.DeleteOptions{NS: from.d.NS, Strategy: batch.DeleteGroup})
	} else {
		rep, err = store.Move(ctx, from.conn, runs.MoveOptions{NS: from.d.NS, To: spaces[1].d.NS, Strategy: batch.MoveGroup})
	}
	return runsErr(rep, err)
}

// runsErr is a delete's or a move's error: its own, or its runs' (a run's
// failure is in the report, as devbulk delete says it).
func runsErr(rep *runs.Report, err error) error {
	if err == nil && rep != nil {
		return rep.Err()
	}
	return err
}

// space is a step's throwaway namespace, a socket there, and the devices
// the kernel put there itself (lo, and a tunnel module's fallback device:
// ipip's tunl0, gre's gre0), which are not the run's.
type space struct {
	d    *namespace.Dedicated
	conn *nlbatch.Conn
	own  []string
}

// stepSpaces makes a step's namespaces: one, and the one a move goes to.
func stepSpaces(p Path) ([]*space, error) {
	n := 1
	if p == Move {
		n = 2
	}
	var spaces []*space
	for range n {
		s, err := newSpace()
		if err != nil {
			for _, s := range spaces {
				s.d.Release()
			}
			return nil, err
		}
		spaces = append(spaces, s)
	}
	return spaces, nil
}

func newSpace() (*space, error) {
	d, err := namespace.NewDedicated()
	if err != nil {
		return nil, err
	}
	conn, err := nlbatch.Dial(d.NS.Handle, nlbatch.Options{})
	if err != nil {
		d.Release()
		return nil, err
	}
	d.Hold(conn)
	s := &space{d: d, conn: conn}
	own, err := s.devices()
	if err != nil {
		d.Release()
		return nil, err
	}
	for _, l := range own {
		s.own = append(s.own, l.Name)
	}
	return s, nil
}

// recordTrue checks devbulk's promise after the faulted request: a device
// of the run that exists is in a record of its namespace, or is a moved
// veth's peer, which stays where it was made and goes with the veth
// (docs/safety.md): a veth there whose peer is in another of the step's
// namespaces, one a record names. The throwaway namespaces hold only the
// run's devices, and their own.
func recordTrue(store *runs.Store, spaces []*space) string {
	recs, _, err := store.Load()
	if err != nil {
		return err.Error()
	}
	recorded := make([]bool, len(spaces))
	for i, s := range spaces {
		recorded[i] = slices.ContainsFunc(recs, func(r *runs.Record) bool { return r.Touches(s.d.NS.ID) })
	}
	for i, s := range spaces {
		left, err := s.devices()
		if err != nil {
			return err.Error()
		}
		elsewhere := slices.Contains(recorded[:i], true) || slices.Contains(recorded[i+1:], true)
		left = slices.DeleteFunc(left, func(l nlbatch.Link) bool { return elsewhere && devices.Paired(l.Kind) && l.HasParentNetns })
		if len(left) > 0 && !recorded[i] {
			return fmt.Sprintf("%d devices left (%s…) in a namespace no record names", len(left), left[0].Name)
		}
	}
	return ""
}

// finish deletes what the run left, as a user would (devbulk delete in
// each namespace), and checks that nothing is left, devices or records.
func finish(ctx context.Context, store *runs.Store, spaces []*space) string {
	for _, s := range spaces {
		recs, _, err := store.Load()
		if err != nil {
			return err.Error()
		}
		if len(recs) == 0 {
			break
		}
		rep, err := store.Delete(ctx, s.conn, runs.DeleteOptions{NS: s.d.NS, Strategy: batch.DeleteGroup})
		if err := runsErr(rep, err); err != nil {
			return "devbulk delete after the fault: " + err.Error()
		}
	}
	recs, _, _ := store.Load()
	for _, s := range spaces {
		left, err := s.devices()
		if err != nil {
			return err.Error()
		}
		if len(left) > 0 || len(recs) > 0 {
			return fmt.Sprintf("after devbulk delete: %d devices and %d records left", len(left), len(recs))
		}
	}
	return ""
}

// devices are the namespace's devices but its own.
func (s *space) devices() ([]nlbatch.Link, error) {
	links, err := s.conn.Links()
	if err != nil {
		return nil, fmt.Errorf("listing the step's devices: %w", err)
	}
	return slices.DeleteFunc(links, func(l nlbatch.Link) bool { return slices.Contains(s.own, l.Name) }), nil
}

// split takes the kernel's notes of the injected fault out of a step's
// findings: the first says where it landed.
func split(all []kernlog.Finding) (findings []kernlog.Finding, site string) {
	for _, f := range all {
		switch {
		case f.Class != kernlog.InjectedFault:
			findings = append(findings, f)
		case site == "":
			site = f.Site(4)
		}
	}
	return findings, site
}
