package kernlog

import (
	"fmt"
	"io"
	"strings"
)

// Finding is one complaint of the kernel.
type Finding struct {
	// Phase is what devbulk was doing when the report's first line was
	// read (Watcher.Phase); a report the kernel prints late (a hung task's
	// after its timeout) says "after" the phase it followed.
	Phase string `json:"phase"`
	// Class is the complaint: warning, bug, oops, lockdep, kasan, rcu
	// stall, soft lockup, hung task, refcount leak, ref_tracker, refcount,
	// ubsan, memory leak, allocation failure, panic.
	Class string `json:"class"`
	// Text is the report as the kernel printed it, trimmed: its first line,
	// its own lines and its call trace, without the register dump.
	Text []string `json:"text"`
}

// Write prints the finding for people: its class and phase, then its
// text, indented under indent.
func (f Finding) Write(w io.Writer, indent string) {
	fmt.Fprintf(w, "%s%s during %s:\n", indent, f.Class, f.Phase)
	for _, l := range f.Text {
		fmt.Fprintf(w, "%s  %s\n", indent, l)
	}
}

// Title is the report's first line.
func (f Finding) Title() string { return f.Text[0] }

// Site is where the report's call trace begins, below the report's own
// frames (dump_stack, the fault injection's): up to depth functions,
// innermost first, without offsets ("__kmalloc ← netdev_name_node_alloc");
// "" without a trace.
func (f Finding) Site(depth int) string {
	var fns []string
	trace := false
	for _, l := range f.Text {
		l = strings.TrimSpace(l)
		switch {
		case l == "Call Trace:":
			trace = true
			continue
		case !trace || strings.HasPrefix(l, "<") || strings.HasPrefix(l, "?"):
			continue
		}
		fn, _, _ := strings.Cut(l, "+")
		if reportFrames().MatchString(fn) {
			continue
		}
		if fns = append(fns, fn); len(fns) == depth {
			break
		}
	}
	return strings.Join(fns, " ← ")
}

// maxLines bounds a finding's text: a report's head and its call trace
// fit; a lockdep chain's tail is in the kernel's log.
const maxLines = 60

// maxGapUsec ends a report whose next line does not follow within this
// long (the kernel prints a report's lines at once).
const maxGapUsec = 500_000

// endsAtTask are the classes whose report ends with its call trace, not
// with an end-trace line.
var endsAtTask = map[string]bool{"hung task": true, "rcu stall": true, "soft lockup": true, "refcount leak": true, "ref_tracker": true, InjectedFault: true}

// grouper turns records, in order, into findings.
type grouper struct {
	open    *Finding
	lastUS  int64
	cut     bool // the last record was the "cut here" line
	done    []Finding
	records int
}

// add takes the next kernel record, read during phase.
func (g *grouper) add(r record, phase string) {
	g.records++
	if !r.kernel {
		return
	}
	if r.text == cutHere {
		g.close()
		g.cut = true
		return
	}
	cut := g.cut
	g.cut = false
	if class := classify(r.text); class != "" {
		g.close()
		g.open = &Finding{Phase: phase, Class: class, Text: []string{r.text}}
		g.lastUS = r.usec
		return
	}
	if cut { // a report after "cut here" the classes do not name
		g.open = &Finding{Phase: phase, Class: "warning", Text: []string{r.text}}
		g.lastUS = r.usec
		return
	}
	if g.open == nil {
		return
	}
	if r.usec-g.lastUS > maxGapUsec {
		g.close()
		return
	}
	g.lastUS = r.usec
	if line, ok := keep(r.text); ok && len(g.open.Text) < maxLines {
		g.open.Text = append(g.open.Text, line)
	}
	if strings.HasPrefix(r.text, endTrace) || endsAtTask[g.open.Class] && strings.TrimSpace(r.text) == "</TASK>" {
		g.close()
	}
}

func (g *grouper) close() {
	if g.open != nil {
		g.done = append(g.done, *g.open)
		g.open = nil
	}
}
