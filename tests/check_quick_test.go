package tests

// Issue 40, item 1: `devbulk check` with no suite is a quick check of what
// this kernel runs here; the VM's scenarios are opt-in (--vm).

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/devbulk/devbulk/check"
)

func TestCheckQuickByDefault(t *testing.T) {
	needKind(t, "ifb")
	needKind(t, "veth")
	dir := t.TempDir()
	for args, want := range map[string]string{"": "quick", "--vm": "full", "--here": "full"} {
		r := run(t, dir, strings.Fields("check --print-suite "+args)...)
		s, err := check.ParseSuite(strings.NewReader(r.stdout))
		if r.code != 0 || err != nil || s.Name != want || s.NeedsVM() != (want == "full") {
			t.Errorf("check --print-suite %s: exit %d, %v, suite %+v; want the %s suite", args, r.code, err, s, want)
		}
	}
	base := filepath.Join(dir, "base.json")
	r := run(t, dir, "check", "--save", base, "--format", "json", "--quiet")
	var rep check.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); r.code != 0 || err != nil || rep.Current == nil {
		t.Fatalf("check: exit %d, %v\n%s", r.code, err, r.stderr)
	}
	quick, _ := check.ParseSuite(strings.NewReader(string(check.QuickSuite())))
	if rep.Current.Meta.Suite != "quick" || len(rep.Current.Scenarios) != len(quick.Scenarios) {
		t.Errorf("check ran suite %q with %d scenarios, want the quick suite's %d", rep.Current.Meta.Suite, len(rep.Current.Scenarios), len(quick.Scenarios))
	}
	for _, sc := range rep.Current.Scenarios {
		if sc.Skip != "" || sc.Error != "" || sc.Kernel != "" || len(sc.Lines) == 0 {
			t.Errorf("scenario %s: skip %q, error %q, kernel %q, %d lines: want it measured here", sc.Name, sc.Skip, sc.Error, sc.Kernel, len(sc.Lines))
		}
	}
	// A baseline of another suite would fail every scenario as missing:
	// refused before anything runs.
	for suite, want := range map[string]string{"full": "made with devbulk's full suite: give --vm too (or --here in a fleet's guest)", "mine": `made with the suite "mine": give that suite with --suite`} {
		other := filepath.Join(dir, suite+".json")
		editResults(t, base, other, func(r *check.Results) { r.Meta.Suite = suite })
		if r := run(t, dir, "check", "--baseline", other); r.code != 2 || !strings.Contains(r.stderr, want) || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("check --baseline of suite %s: exit %d, %q; want exit 2, %q", suite, r.code, r.stderr, want)
		}
	}
}

// A suite's vm scenario runs only with --vm: without, it is skipped and
// says how to run it; the others run here.
func TestCheckVMScenariosAreOptIn(t *testing.T) {
	needKind(t, "ifb")
	dir := t.TempDir()
	suite := filepath.Join(dir, "suite.json")
	os.WriteFile(suite, []byte(`{"name": "mixed", "scenarios": [
	  {"name": "dummy", "vm": true, "repeat": 1, "bench": {"kind": "dummy", "count": 10, "delete": ["group"]}},
	  {"name": "ifb", "repeat": 1, "bench": {"kind": "ifb", "count": 10, "delete": ["group"]}}]}`), 0o644)
	r := run(t, dir, "check", "--suite", suite, "--format", "json")
	var rep check.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); r.code != 0 || err != nil || rep.Current == nil {
		t.Fatalf("check: exit %d, %v\n%s", r.code, err, r.stderr)
	}
	for _, sc := range rep.Current.Scenarios {
		if (sc.Name == "dummy") != strings.Contains(sc.Skip, "--vm boots a VM for it") || sc.Name == "ifb" && len(sc.Lines) == 0 {
			t.Errorf("scenario %s: skip %q, %d lines", sc.Name, sc.Skip, len(sc.Lines))
		}
	}
	if r := run(t, dir, "check", "--vm", "--here"); r.code != 2 || !strings.Contains(r.stderr, "--here runs every scenario on this kernel") {
		t.Errorf("check --vm --here: exit %d, %q", r.code, r.stderr)
	}
}
