package check

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/perf/benchfmt"

	"github.com/devbulk/devbulk"
)

// lines makes one benchmark's repetitions with the given ns/op values.
func lines(name string, vals ...float64) []Line {
	var out []Line
	for _, v := range vals {
		out = append(out, Line{Name: name, Iters: 1000, Values: []Value{{v, UnitNsPerOp}, {1e9 / v, UnitDevPerSec}}})
	}
	return out
}

func results(kernel string, scenarios ...Scenario) *Results {
	return &Results{Meta: Meta{Header: devbulk.Header{Tool: "devbulk", Version: "test", Kernel: kernel, CPUs: 2, Date: "2026-12-02T00:00:00Z"},
		CPUModel: "Test CPU", Suite: "fixture"}, Scenarios: scenarios}
}

const group = "Delete/kind=dummy/strategy=group/n=1000"

func verdictOf(t *testing.T, c *Report, scenario, bench string) Comparison {
	t.Helper()
	for _, s := range c.Scenarios {
		for _, cmp := range s.Comparisons {
			if s.Name == scenario && cmp.Benchmark == bench {
				return cmp
			}
		}
	}
	t.Fatalf("no comparison of %s %s", scenario, bench)
	return Comparison{}
}

func TestCompare(t *testing.T) {
	base := lines(group, 300, 310, 305, 298, 302, 307)
	for _, tc := range []struct {
		name    string
		cur     []Line
		verdict string
		failed  bool
	}{
		{"a clear regression", lines(group, 450, 460, 455, 470, 452, 449), Regression, true},
		{"noise", lines(group, 296, 312, 301, 309, 299, 304), Same, false},
		{"significant but within the threshold", lines(group, 315, 318, 316, 320, 317, 319), Same, false},
		{"an improvement", lines(group, 150, 152, 149, 151, 150, 153), Improvement, false},
		{"too few repetitions to tell", lines(group, 450, 460), Same, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Compare(results("a", Scenario{Name: "dummy", Lines: base}), results("b", Scenario{Name: "dummy", Lines: tc.cur}), 10)
			cmp := verdictOf(t, c, "dummy", group)
			if cmp.Verdict != tc.verdict || c.Failed() != tc.failed {
				t.Errorf("verdict %s (failed %v), want %s (%v): delta %+.1f%% p=%.3f", cmp.Verdict, c.Failed(), tc.verdict, tc.failed, cmp.DeltaPct, cmp.P)
			}
			if want := map[bool]int{true: ExitFail, false: ExitPass}[tc.failed]; c.ExitCode() != want {
				t.Errorf("exit code %d, want %d", c.ExitCode(), want)
			}
		})
	}
}

func TestCompareMissingNewSkippedFailed(t *testing.T) {
	const netns = "Delete/kind=dummy/strategy=netns/n=1000"
	base := results("a",
		Scenario{Name: "dummy", Lines: append(lines(group, 300, 301, 302), lines(netns, 400, 401, 402)...)},
		Scenario{Name: "vlan", Lines: lines(group, 1, 2, 3)},
		Scenario{Name: "ipip", Lines: lines(group, 4, 5, 6)}) // not in the current run at all
	cur := results("b",
		Scenario{Name: "dummy", Lines: append(lines(group, 300, 301, 302), lines("Delete/kind=dummy/strategy=module/n=1000", 5, 6, 7)...)},
		Scenario{Name: "vlan", Skip: "vlan: no 8021q"},
		Scenario{Name: "gre", Error: "EEXIST"})
	c := Compare(base, cur, 10)
	if v := verdictOf(t, c, "dummy", netns); v.Verdict != Missing || v.Base == nil || v.Cur != nil {
		t.Errorf("a benchmark gone from the current run: %+v", v)
	}
	if v := verdictOf(t, c, "dummy", "Delete/kind=dummy/strategy=module/n=1000"); v.Verdict != New {
		t.Errorf("a benchmark new in the current run: %+v", v)
	}
	if v := verdictOf(t, c, "ipip", group); v.Verdict != Missing || len(c.Scenarios) != 4 || !c.Scenarios[3].Failed() {
		t.Errorf("a scenario gone from the current run: %+v, %d scenarios", v, len(c.Scenarios))
	}
	if !c.Scenarios[0].Failed() || c.Scenarios[1].Failed() || !c.Scenarios[2].Failed() {
		t.Errorf("failed: missing %v, skipped %v, errored %v", c.Scenarios[0].Failed(), c.Scenarios[1].Failed(), c.Scenarios[2].Failed())
	}
	if c.ExitCode() != ExitFail {
		t.Errorf("exit code %d", c.ExitCode())
	}
	allSkipped := Compare(nil, results("b", Scenario{Name: "vlan", Skip: "no 8021q"}), 10)
	if allSkipped.ExitCode() != ExitSkip {
		t.Errorf("nothing ran: exit code %d, want %d", allSkipped.ExitCode(), ExitSkip)
	}
}

var (
	ktapResult = regexp.MustCompile(`^(ok|not ok) (\d+) ([A-Za-z0-9_-]+)( # SKIP \S.*)?$`)
	ktapDiag   = regexp.MustCompile(`^# (\S+)( [a-z_]+=\S+)+$`)
)

// parseKTAP checks KTAP version 1 structure and returns the results by
// test name ("ok", "not ok", "skip") and the diagnostics lines.
func parseKTAP(t *testing.T, out string) (map[string]string, []string) {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(out))
	if !sc.Scan() || sc.Text() != "KTAP version 1" {
		t.Fatalf("first line %q, want KTAP version 1", sc.Text())
	}
	plan, next := -1, 1
	res := map[string]string{}
	var diags []string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "1.."):
			if plan >= 0 || next != 1 {
				t.Errorf("plan %q misplaced", line)
			}
			fmt.Sscanf(line, "1..%d", &plan)
		case strings.HasPrefix(line, "# "):
			diags = append(diags, line)
		default:
			m := ktapResult.FindStringSubmatch(line)
			if m == nil {
				t.Fatalf("not a KTAP line: %q", line)
			}
			if m[2] != fmt.Sprint(next) {
				t.Errorf("test number %s, want %d", m[2], next)
			}
			next++
			res[m[3]] = m[1]
			if m[4] != "" {
				res[m[3]] = "skip"
			}
		}
	}
	if plan != next-1 {
		t.Errorf("plan 1..%d, %d results", plan, next-1)
	}
	return res, diags
}

// ktapFixture is the KTAP of a check with a regression (dummy), noise
// (ifb), a skip (vlan) and a baseline scenario the run lacks (gone).
func ktapFixture(t *testing.T) *bytes.Buffer {
	t.Helper()
	base := results("a", Scenario{Name: "dummy", Lines: lines(group, 300, 310, 305, 298, 302, 307)},
		Scenario{Name: "ifb", Lines: lines(group, 300, 310, 305, 298, 302, 307)},
		Scenario{Name: "gone", Lines: lines(group, 300, 310, 305, 298, 302, 307)})
	cur := results("b", Scenario{Name: "dummy", Lines: lines(group, 450, 460, 455, 470, 452, 449)},
		Scenario{Name: "ifb", Lines: lines(group, 296, 312, 301, 309, 299, 304)},
		Scenario{Name: "vlan", Skip: "vlan: the kernel has no 8021q\nmodule"})
	var b bytes.Buffer
	if err := Compare(base, cur, 10).WriteKTAP(&b); err != nil {
		t.Fatal(err)
	}
	return &b
}

func TestKTAP(t *testing.T) {
	b := ktapFixture(t)
	res, diags := parseKTAP(t, b.String())
	if res["dummy"] != "not ok" || res["ifb"] != "ok" || res["vlan"] != "skip" || res["gone"] != "not ok" {
		t.Errorf("results %v\n%s", res, b.String())
	}
	regressed := false
	for _, d := range diags {
		if !strings.HasPrefix(d, "# Totals:") && !ktapDiag.MatchString(d) {
			t.Errorf("diagnostic not `# key=value`: %q", d)
		}
		regressed = regressed || strings.HasPrefix(d, "# dummy benchmark="+group) && strings.Contains(d, " verdict=regression")
	}
	if !regressed {
		t.Errorf("no regression diagnostic for dummy:\n%s", b.String())
	}
}

// The kernel's own KTAP parser (tools/testing/kunit/kunit.py from Debian's
// linux-source package; tests/run-all.sh installs it and sets DEVBULK_KUNIT)
// reads what check writes: every scenario's status, the diagnostics
// accepted, no parse error. It is stricter than parseKTAP about one thing
// that matters: a malformed line makes it report the run as crashed.
func TestKTAPThroughKunitParser(t *testing.T) {
	b := ktapFixture(t)
	// kunit.py exits 1 when a test failed, as here; its summary and the
	// JSON document say what it understood.
	text, doc := kunitParse(t, b.Bytes())
	if !strings.Contains(text, "Ran 4 tests: passed: 1, failed: 2, skipped: 1\n") {
		t.Errorf("kunit.py's summary is not 1 passed, 2 failed, 1 skipped:\n%s\nfrom\n%s", text, b.String())
	}
	var parsed struct {
		Cases []struct{ Name, Status string } `json:"test_cases"`
	}
	if err := json.Unmarshal(doc, &parsed); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, c := range parsed.Cases {
		got[c.Name] = c.Status
	}
	want := map[string]string{"dummy": "FAIL", "ifb": "PASS", "vlan": "SKIP", "gone": "FAIL"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("kunit.py read %v, want %v\n%s", got, want, b.String())
	}
}

// kunitParse runs the kernel's KTAP parser (kunit.py parse, installed by
// tests/run-all.sh) over ktap: its summary, and its JSON document.
func kunitParse(t *testing.T, ktap []byte) (string, []byte) {
	t.Helper()
	kunit := os.Getenv("DEVBULK_KUNIT")
	if kunit == "" {
		t.Skip("the kernel's KTAP parser is not installed: tests/run-all.sh installs it (DEVBULK_KUNIT=path/to/kunit.py)")
	}
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.ktap"), filepath.Join(dir, "kunit.json")
	if err := os.WriteFile(in, ktap, 0o644); err != nil {
		t.Fatal(err)
	}
	text, _ := exec.Command("python3", kunit, "parse", "--json="+out, in).CombinedOutput()
	doc, err := os.ReadFile(out)
	if err != nil {
		t.Fatalf("kunit.py wrote no JSON: %v\n%s", err, text)
	}
	return string(text), doc
}

// The benchstat output reads back with benchfmt, and benchstat itself
// (go tool benchstat, pinned in go.mod) compares two kernels in one table.
func TestBenchstat(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, r ...*Results) string {
		var b bytes.Buffer
		if err := WriteBenchstat(&b, len(r) > 1, r...); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	a := results("6.1.0", Scenario{Name: "dummy", Lines: lines(group, 300, 310, 305, 298, 302, 307)})
	b := results("6.18.0", Scenario{Name: "dummy", Lines: lines(group, 450, 460, 455, 470, 452, 449)})
	b.Meta.CPUs, b.Meta.CPUModel = 4, "QEMU Virtual CPU" // another machine: still one table
	old, cur := write("old.txt", a), write("new.txt", b)

	f, _ := os.Open(cur)
	defer f.Close()
	rd := benchfmt.NewReader(f, cur)
	n := 0
	for rd.Scan() {
		switch rec := rd.Result().(type) {
		case *benchfmt.Result:
			n++
			if v, ok := rec.Value("sec/op"); rec.Name.String() != group || rec.Iters != 1000 || !ok || v < 449e-9 || rec.GetConfig("goos") != "linux" { // benchfmt tidies ns/op
				t.Errorf("read back %s %d %v, config %v", rec.Name, rec.Iters, rec.Values, rec.Config)
			}
		case *benchfmt.SyntaxError:
			t.Errorf("syntax error: %v", rec)
		}
	}
	if n != 6 || rd.Units().GetBetter("dev/s") != 1 {
		t.Errorf("%d results, dev/s better %d", n, rd.Units().GetBetter("dev/s"))
	}

	out, err := exec.Command("go", "tool", "benchstat", old, cur).CombinedOutput()
	if err != nil {
		t.Fatalf("benchstat: %v\n%s", err, out)
	}
	if !regexp.MustCompile(`(?m)^Delete/kind=dummy/strategy=group/n=1000\s.*\+4\d\.\d+% \(p=0\.002 n=6\)`).Match(out) {
		t.Errorf("benchstat did not compare the kernels in one row:\n%s", out)
	}

	// Two kernels in one stream (check --vm-kernel A --vm-kernel B) carry a
	// kernel: key, which benchstat -col kernel turns into the columns.
	both := write("both.txt", a, b)
	out, err = exec.Command("go", "tool", "benchstat", "-col", "kernel", both).CombinedOutput()
	if err != nil {
		t.Fatalf("benchstat -col kernel: %v\n%s", err, out)
	}
	if !regexp.MustCompile(`(?m)^\s+│\s+6\.1\.0\s+│\s+6\.18\.0\s`).Match(out) ||
		!regexp.MustCompile(`(?m)^Delete/kind=dummy/strategy=group/n=1000\s.*\+4\d\.\d+% \(p=0\.002 n=6\)`).Match(out) {
		t.Errorf("benchstat -col kernel did not put the two kernels side by side:\n%s", out)
	}
}

// Three repetitions give no 95% interval of a median: the table says so in
// words, not "±∞" (issue 40, item 5).
func TestCellWithTooFewRepeats(t *testing.T) {
	for _, c := range []struct {
		s    *Summary
		want string
	}{
		{nil, "-"},
		{&Summary{Median: 2e6, N: 3}, "2ms (3: too few for an interval)"},
	} {
		if got := cell(c.s); got != c.want {
			t.Errorf("cell(%+v) = %q, want %q", c.s, got, c.want)
		}
	}
}
