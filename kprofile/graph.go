package kprofile

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// waits are the functions that wait (for RCU, for references) rather than
// work: a wait is totalled by where it was called from, its nearest traced
// caller that is no wait ("synchronize_rcu (xfrm_net_exit)"), which says
// whose wait it is.
var waits = map[string]bool{"synchronize_rcu": true, "synchronize_rcu_expedited": true, "synchronize_net": true,
	"rcu_barrier": true, "netdev_wait_allrefs_any": true, "netdev_wait_allrefs": true}

// Call totals one traced function over a trace: how often it returned,
// its time from entry to return (Inclusive), and that time less the time of
// the traced functions it called (Self): what it is charged with when every
// nested wait is charged once, to itself.
type Call struct {
	Function    string
	Calls       int
	InclusiveNS int64
	SelfNS      int64
}

// graphTotals reads function_graph output (options funcgraph-proc and
// funcgraph-tail on, funcgraph-irqs off) and totals each function, waits
// by caller. Calls
// nest per task, so a function that returns on another CPU is still
// matched. It returns the totals in first-seen order and the time of the
// outermost calls (those with no traced caller) in all; Unmatched counts
// returns without a recorded entry (the trace started inside them, or lost
// entries).
func graphTotals(r io.Reader) (calls []Call, outerNS int64, unmatched int, err error) {
	g := &graph{index: map[string]int{}, stacks: map[int][]frame{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	lines, parsed := 0, 0
	for sc.Scan() {
		if cpuColumn().MatchString(sc.Text()) {
			lines++
		}
		if l, ok := parseGraphLine(sc.Text()); ok {
			parsed++
			g.add(l)
		}
	}
	if lines > 0 && parsed == 0 {
		return nil, 0, 0, fmt.Errorf("%d trace lines in a format devbulk does not read (function_graph options changed?)", lines)
	}
	// A task that migrates mid-call can have its calls' returns printed
	// against another call of the same function (see add's exit case): the
	// time moves between calls of one caller, never in or out of its
	// total, so a call's own time is only right summed over all calls.
	for i := range g.calls {
		g.calls[i].SelfNS = max(0, g.calls[i].SelfNS)
	}
	return g.calls, g.outerNS, g.unmatched, sc.Err()
}

// graph is graphTotals under way.
type graph struct {
	calls     []Call
	index     map[string]int // into calls, by name
	stacks    map[int][]frame
	outerNS   int64
	unmatched int
}

// frame is a call whose return has not been read yet.
type frame struct {
	fn       string
	children int64 // time of the traced calls made from it
}

// add reads one line of a task's calls.
func (g *graph) add(l graphLine) {
	switch l.kind {
	case entry:
		g.stacks[l.pid] = append(g.stacks[l.pid], frame{fn: l.fn})
	case leaf:
		g.done(l.pid, l.fn, l.ns, 0)
	case exit:
		st := g.stacks[l.pid]
		i := len(st) - 1
		for i >= 0 && st[i].fn != l.fn {
			i-- // an entry whose return was lost: dropped below
		}
		switch {
		case i < 0 && len(st) > 0:
			// Inside a traced call: the kernel printed this call's entry
			// merged, as a leaf, with a later call's return (it looks for
			// the return on the entry's CPU, and the task had migrated).
			// The leaf holds the later call's time, this line the
			// first's; the later call's entry stays open. Each call is
			// counted once, with its time.
			g.done(l.pid, l.fn, l.ns, 0)
		case i < 0:
			g.unmatched++
		default:
			f := st[i]
			g.stacks[l.pid] = st[:i]
			g.done(l.pid, f.fn, l.ns, f.children)
		}
	}
}

// done records a returned call of fn that took d, made from the frame
// below it on the stack (none: an outermost call).
func (g *graph) done(pid int, fn string, d, children int64) {
	name := fn
	if waits[fn] {
		st := g.stacks[pid]
		for i := len(st) - 1; i >= 0; i-- {
			if !waits[st[i].fn] {
				name = fn + " (" + st[i].fn + ")"
				break
			}
		}
	}
	i, ok := g.index[name]
	if !ok {
		i = len(g.calls)
		g.index[name] = i
		g.calls = append(g.calls, Call{Function: name})
	}
	c := &g.calls[i]
	c.Calls++
	c.InclusiveNS += d
	c.SelfNS += d - children // clamped at 0 once all are in
	if st := g.stacks[pid]; len(st) > 0 {
		st[len(st)-1].children += d
	} else {
		g.outerNS += d
	}
}

type lineKind int

const (
	entry lineKind = iota // "fn() {"
	leaf                  // "fn();" with its duration
	exit                  // "} /* fn */" with its duration
)

type graphLine struct {
	kind lineKind
	pid  int
	fn   string
	ns   int64
}

// graphLine matches " 1)  devbulk-123   | + 12.345 us   |    } /* fn */":
// CPU, task-pid, an overhead mark (+ ! # * @ $), the duration, the call.
var cpuColumn = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*\d+\)\s`) })

var graphLineRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\s*\d+\)\s+(\S.*?)-(\d+)\s+\|\s*(?:[-+!#*@$]\s*)?(?:(\d+)(?:\.(\d+))?\s+us\s*)?\|\s?(.*)$`)
})

func parseGraphLine(s string) (graphLine, bool) {
	m := graphLineRE().FindStringSubmatch(s)
	if m == nil {
		return graphLine{}, false
	}
	pid, _ := strconv.Atoi(m[2])
	l := graphLine{pid: pid}
	if m[3] != "" {
		us, _ := strconv.ParseInt(m[3], 10, 64)
		l.ns = us * 1000
		if frac := m[4]; frac != "" { // fewer than 3 digits when the kernel shortened it
			ns, _ := strconv.ParseInt((frac + "000")[:3], 10, 64)
			l.ns += ns
		}
	}
	call := strings.TrimSpace(m[5])
	switch {
	case strings.HasSuffix(call, "() {"):
		l.kind, l.fn = entry, strings.TrimSuffix(call, "() {")
	case strings.HasSuffix(call, "();") && m[3] != "":
		l.kind, l.fn = leaf, strings.TrimSuffix(call, "();")
	case strings.HasPrefix(call, "} /* ") && strings.HasSuffix(call, " */") && m[3] != "":
		l.kind, l.fn = exit, strings.TrimSuffix(strings.TrimPrefix(call, "} /* "), " */")
	default:
		return graphLine{}, false // a comment, a marker, an interrupt
	}
	return l, l.fn != ""
}
