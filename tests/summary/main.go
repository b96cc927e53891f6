// Command summary reads `go test -json` events (as gotestsum's --jsonfile
// writes them), prints per package how many tests passed, skipped and
// failed, then the ten slowest tests (the suite's time is watched run by
// run, CI's too), and fails when a test was skipped for a reason that the expected
// list does not name: CI must not pass because the tests did not run.
//
//	go run ./tests/summary -expected tests/expected-skips events.json
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
	"text/tabwriter"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
	Elapsed float64 // seconds, on a test's pass or fail
}

// timed is a top-level test and how long it ran.
type timed struct {
	seconds float64
	name    string // its package's last element, a dot, the test
}

type counts struct{ passed, skipped, failed int }

// skip is a skipped test and the message it gave.
type skip struct{ pkg, test, reason string }

// guestLine is what the VM tests log of the test binary that ran as the
// guest's init (guestRan in tests/vm_test.go): those tests are not events.
var guestLine = regexp.MustCompile(`: in the VM: (\d+) passed, (\d+) skipped, (\d+) failed$`)

// tally reads events and counts the tests' outcomes, and each skip with
// its reason: the last "file_test.go:N: message" line the test printed.
// The VM guests' own counts are summed under the package "(VM guests)".
func tally(r io.Reader) (map[string]*counts, []skip, []timed, error) {
	byPkg := map[string]*counts{}
	guests := &counts{}
	last := map[string]string{} // package/test → last t.Log/t.Skip message
	var skips []skip
	var times []timed
	msg := regexp.MustCompile(`^\s+\S+_test\.go:\d+: (.*)$`)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			continue // gotestsum may interleave non-JSON lines
		}
		if e.Test == "" {
			continue
		}
		key := e.Package + "/" + e.Test
		c := byPkg[e.Package]
		if c == nil {
			c = &counts{}
			byPkg[e.Package] = c
		}
		switch e.Action {
		case "output":
			line := strings.TrimRight(e.Output, "\n")
			if m := msg.FindStringSubmatch(line); m != nil {
				last[key] = m[1]
			}
			if m := guestLine.FindStringSubmatch(line); m != nil {
				var p, s, f int
				fmt.Sscan(m[1]+" "+m[2]+" "+m[3], &p, &s, &f)
				guests.passed, guests.skipped, guests.failed = guests.passed+p, guests.skipped+s, guests.failed+f
			}
		case "pass", "fail":
			if e.Action == "pass" {
				c.passed++
			} else {
				c.failed++
			}
			if !strings.Contains(e.Test, "/") {
				times = append(times, timed{e.Elapsed, e.Package[strings.LastIndex(e.Package, "/")+1:] + "." + e.Test})
			}
		case "skip":
			c.skipped++
			skips = append(skips, skip{e.Package, e.Test, last[key]})
		}
	}
	if *guests != (counts{}) {
		byPkg[guestPkg] = guests
	}
	return byPkg, skips, times, sc.Err()
}

// guestPkg names the VM guests' row; it sorts after the packages and is
// not part of "all" (a guest's tests ran inside one test of tests/).
const guestPkg = "(VM guests)"

// expected reads one regular expression a line; # starts a comment.
func expected(path string) ([]*regexp.Regexp, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []*regexp.Regexp
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		re, err := regexp.Compile(line)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, re)
	}
	return out, nil
}

func run(events io.Reader, allowed []*regexp.Regexp, w io.Writer) error {
	byPkg, skips, times, err := tally(events)
	if err != nil {
		return err
	}
	pkgs := make([]string, 0, len(byPkg))
	for p := range byPkg {
		pkgs = append(pkgs, p)
	}
	sort.Strings(pkgs)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "package\tran\tpassed\tskipped\tfailed\t")
	var total counts
	row := func(name string, c *counts) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t\n", name, c.passed+c.failed, c.passed, c.skipped, c.failed)
	}
	for _, p := range pkgs {
		if p == guestPkg {
			continue
		}
		c := byPkg[p]
		row(p, c)
		total.passed, total.skipped, total.failed = total.passed+c.passed, total.skipped+c.skipped, total.failed+c.failed
	}
	row("all", &total)
	if g := byPkg[guestPkg]; g != nil {
		row(guestPkg, g)
	}
	tw.Flush()
	writeSlowest(w, times, 10)
	var bad []string
	for _, s := range skips {
		ok := false
		for _, re := range allowed {
			if re.MatchString(s.reason) {
				ok = true
				break
			}
		}
		if !ok {
			bad = append(bad, fmt.Sprintf("%s %s: %q", s.pkg, s.test, s.reason))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("%d tests skipped for a reason not in the expected list:\n  %s", len(bad), strings.Join(bad, "\n  "))
	}
	if total.passed+total.failed == 0 {
		return errors.New("no test ran")
	}
	return nil
}

// writeSlowest prints the n slowest tests, slowest first.
func writeSlowest(w io.Writer, times []timed, n int) {
	sort.SliceStable(times, func(i, j int) bool { return times[i].seconds > times[j].seconds })
	fmt.Fprintf(w, "the %d slowest tests:\n", min(n, len(times)))
	for _, t := range times[:min(n, len(times))] {
		fmt.Fprintf(w, "%8.1f s  %s\n", t.seconds, t.name)
	}
}

func main() {
	list := flag.String("expected", "tests/expected-skips", "file of skip reasons (regular expressions) that are expected")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: summary -expected FILE EVENTS.json")
		os.Exit(2)
	}
	allowed, err := expected(*list)
	if err == nil {
		var f *os.File
		if f, err = os.Open(flag.Arg(0)); err == nil {
			err = run(f, allowed, os.Stdout)
			f.Close()
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "summary:", err)
		os.Exit(1)
	}
}
