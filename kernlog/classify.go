package kernlog

import (
	"regexp"
	"strings"
	"sync"
)

// A class is one kind of complaint, by the first line the kernel prints
// for it. The order matters: lockdep's and KASAN's reports begin as a WARN
// and a BUG do. Compiled when a record is first classified: at package
// init they cost every command ~2 ms of its start, and most read no record.
type class struct {
	name string
	re   *regexp.Regexp
}

var classes = sync.OnceValue(func() []class {
	return []class{
		{"lockdep", regexp.MustCompile(`^WARNING: (possible (circular|recursive) locking|inconsistent lock state|suspicious RCU usage|possible irq lock inversion|lock held when returning|bad unlock balance|held lock freed|nested lock)`)},
		{"kasan", regexp.MustCompile(`^BUG: KASAN: `)},
		{"soft lockup", regexp.MustCompile(`^watchdog: BUG: soft lockup`)},
		{"rcu stall", regexp.MustCompile(`^(rcu: )?INFO: rcu_\w+ (self-)?detected (stalls|stall)`)},
		{"hung task", regexp.MustCompile(`^INFO: task \S+ blocked for more than \d+ seconds`)},
		{"refcount leak", regexp.MustCompile(`^unregister_netdevice: waiting for \S+ to become free`)},
		{"ref_tracker", regexp.MustCompile(`^ref_tracker: `)},
		{"refcount", regexp.MustCompile(`^refcount_t: `)},
		{"bug", regexp.MustCompile(`^(BUG: |kernel BUG at )`)},
		{"oops", regexp.MustCompile(`^(Oops: |general protection fault|unable to handle kernel)`)},
		{"warning", regexp.MustCompile(`^WARNING: `)},
		{"ubsan", regexp.MustCompile(`^UBSAN: `)},
		{"memory leak", regexp.MustCompile(`^kmemleak: \d+ new suspected memory leaks`)},
		{"allocation failure", regexp.MustCompile(`: page allocation failure: `)},
		{"panic", regexp.MustCompile(`^Kernel panic - not syncing`)},
		// A fault injected on purpose (devbulk faults), with the stack that
		// took it when failslab's verbose is 2: where the failure landed.
		{InjectedFault, regexp.MustCompile(`^FAULT_INJECTION: forcing a failure`)},
	}
})

// InjectedFault is the class of the kernel's note of a fault injected on
// purpose: not a complaint, the place the fault landed.
const InjectedFault = "injected fault"

// classify names the complaint a record's text begins, "" when it begins
// none.
func classify(text string) string {
	for _, c := range classes() {
		if c.re.MatchString(text) {
			return c.name
		}
	}
	return ""
}

// cutHere is the line the kernel prints before a WARN's or BUG's report;
// endTrace the last line of one.
const (
	cutHere  = "------------[ cut here ]------------"
	endTrace = "---[ end trace"
)

// reportFrames are the functions of a report's own making at the top of
// its trace: the stack dump, and the fault injection's and the allocators'
// frames above the function whose allocation failed.
var reportFrames = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(dump_stack\w*|show_stack|fail_dump|should_fail\w*|__should_fail\w*|should_failslab|slab_pre_alloc_hook\w*|kmem_cache_alloc\w*|__kmem_cache_alloc\w*|kmalloc\w*|__kmalloc\w*|kmalloc_trace|kvmalloc\w*|__alloc_skb|slab_alloc\w*)(\.\w+)*$`) // with a compiler suffix: should_fail_ex.cold
})

// dropped are the lines of a report a maintainer does not read in a
// finding: the register dump and the code bytes (the call trace and the
// report's own lines stay).
var dropped = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(RIP|RSP|RAX|RDX|RBP|R1[03]|FS|CS|CR2|DR[0-7]|Code|PKRU|Hardware name):? `)
})

// keep says whether a report's line goes in the finding; "Modules linked
// in" is cut to its start.
func keep(line string) (string, bool) {
	if dropped().MatchString(strings.TrimSpace(line)) {
		return "", false
	}
	if strings.HasPrefix(line, "Modules linked in:") && len(line) > 100 {
		return line[:100] + " …", true
	}
	return line, true
}
