package lava

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/devbulk/devbulk/check"
	"github.com/devbulk/devbulk/vm"
)

// A lava-run log (testdata/lava-run.log: the results and console lines of
// a real job, run against a baseline ten times as fast): devbulk's cases
// in order, the job's result, and the results document the guest printed.
func TestReadLog(t *testing.T) {
	run := readFile(t, "testdata/lava-run.log")
	if run.Job != Pass {
		t.Errorf("job %q, want pass", run.Job)
	}
	var names []string
	for _, c := range run.Cases {
		if _, sample := sampleScenario(c.Name); !sample {
			names = append(names, c.Name+":"+c.Result)
		}
	}
	if got := strings.Join(names, " "); got != "dummy:fail vlan:fail churn:fail devbulk.check:fail" {
		t.Errorf("cases %s", got)
	}
	if c := run.Cases[0]; c.Measurement == nil || *c.Measurement <= 0 || c.Units != check.UnitNsPerOp {
		t.Errorf("the first case has no measurement: %+v", c)
	}
	if run.Results == nil || len(run.Results.Scenarios) != 3 || run.Results.Meta.Label != "debian:6.1" {
		t.Fatalf("the guest's results document: %+v", run.Results)
	}
	doc, err := run.Document()
	if err != nil || doc != run.Results {
		t.Errorf("Document of a log is the guest's: %v", err)
	}
	if run.Finished != Pass || run.Damaged != "" {
		t.Errorf("the definition's run: %q, damaged %q", run.Finished, run.Damaged)
	}
	// A warning before the first event does not hide the log.
	b, _ := os.ReadFile("testdata/lava-run.log")
	if !IsLog(append([]byte("/usr/lib/python3/dist-packages/x.py:1: DeprecationWarning: y\n"), b...)) {
		t.Error("a log with a warning first is not a log")
	}
}

// A server's export (testdata/lavacli-results.yaml) has only cases: the
// document made of them has each scenario's samples as one benchmark, and
// its verdict.
func TestReadExport(t *testing.T) {
	run := readFile(t, "testdata/lavacli-results.yaml")
	if run.Results != nil || run.Job != Pass || run.CheckResult() != Fail {
		t.Fatalf("job %q, check %q, results %v", run.Job, run.CheckResult(), run.Results != nil)
	}
	doc, err := run.Document()
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Scenarios) != 3 {
		t.Fatalf("%d scenarios, want 3", len(doc.Scenarios))
	}
	// The job ran against a baseline ten times as fast: every scenario
	// failed there, and says so here.
	for _, sc := range doc.Scenarios {
		if len(sc.Lines) != 5 || sc.Lines[0].Name != "Headline/scenario="+sc.Name || sc.Error == "" || sc.Skip != "" {
			t.Errorf("scenario %s: %d lines (%+v), error %q, skip %q", sc.Name, len(sc.Lines), sc.Lines, sc.Error, sc.Skip)
		}
	}
	// It compares as any results document.
	r := check.Compare(nil, doc, 25)
	if h := r.Scenarios[0].Headline(); h == nil || h.Cur.N != 5 {
		t.Errorf("headline of the export's first scenario: %+v", h)
	}
}

// Output that is not a devbulk job's is refused by name.
func TestReadRefusesOtherOutput(t *testing.T) {
	for name, in := range map[string]string{
		"empty":                     "",
		"other YAML":                "device_type: qemu\n",
		"another's cases":           "- {name: boot, suite: 0_ltp, result: pass}\n",
		"a log of lava's own cases": `{"dt": "x", "lvl": "results", "msg": {"case": "job", "definition": "lava", "result": "pass"}}` + "\n",
	} {
		if _, err := Read(strings.NewReader(in)); !errors.Is(err, ErrNotLAVA) {
			t.Errorf("%s: %v, want ErrNotLAVA", name, err)
		}
	}
}

// The results document survives the console: split, found among other
// lines, in order; a mangled line is an error, not a wrong document.
func TestResultsThroughTheConsole(t *testing.T) {
	want := readFile(t, "testdata/lava-run.log").Results
	var buf bytes.Buffer
	if err := EncodeResults(&buf, want); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) < 3 {
		t.Fatalf("%d lines", len(lines))
	}
	var b blob
	for i, l := range lines {
		b.add("[   12.3] kernel noise")
		if err := b.add(l); err != nil {
			t.Fatalf("line %d: %v", i, err)
		}
	}
	got, err := b.results()
	if err != nil || len(got.Scenarios) != len(want.Scenarios) || got.Meta.Kernel != want.Meta.Kernel {
		t.Fatalf("round trip: %v", err)
	}

	var mangled blob
	for i, l := range lines {
		if i == 1 {
			l = l[:len(l)-8] + "AAAAAAAA"
		}
		mangled.add(l)
	}
	if _, err := mangled.results(); err == nil {
		t.Error("a mangled line went unnoticed")
	}
	var short blob
	for _, l := range lines[1:] {
		short.add(l)
	}
	if _, err := short.results(); err == nil || !strings.Contains(err.Error(), "incomplete") {
		t.Errorf("a missing line: %v", err)
	}
}

// Cases follow the check's verdicts: a regression fails its scenario and
// the check, a skip skips, and each scenario's headline values are its
// samples.
func TestCasesFollowTheVerdicts(t *testing.T) {
	cur := readFile(t, "testdata/lava-run.log").Results
	cur.Scenarios[1] = check.Scenario{Name: "vlan", Skip: "this kernel cannot create vlan"}
	slow := *cur
	r := check.Compare(nil, cur, 25)
	got := map[string]Case{}
	samples := 0
	for _, c := range Cases(r) {
		got[c.Name] = c
		if _, sample := sampleScenario(c.Name); sample {
			samples++
		}
	}
	if got["dummy"].Result != Pass || got["vlan"].Result != Skip || got[CheckCase].Result != Pass || samples != 10 {
		t.Errorf("without a baseline: %+v, %d samples", got, samples)
	}
	if got["dummy"].Measurement == nil || got["dummy.1"].Measurement == nil {
		t.Error("no measurements")
	}

	// Against a baseline ten times as fast: dummy regressed.
	fast := scaled(&slow, 0.1)
	for _, c := range Cases(check.Compare(fast, cur, 25)) {
		if (c.Name == "dummy" || c.Name == CheckCase) && c.Result != Fail {
			t.Errorf("%s: %s against a baseline ten times as fast", c.Name, c.Result)
		}
	}
}

// A job is YAML LAVA reads, ReadJob knows it for devbulk's, and refuses
// other jobs.
func TestJobRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	k := &vm.Kernel{Name: "debian:6.1", Vmlinuz: "/k/vmlinuz", Package: "linux-image-6.1.0-57-cloud-amd64", Append: "rcu_nocbs=all"}
	if err := Job(&buf, JobOptions{Kernel: k, URL: "file:///srv/art/", Suite: "default", Baseline: true, ThresholdPct: 40, MemMiB: 2048}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"url: file:///srv/art/vmlinuz", "url: file:///srv/art/ramdisk.cpio.gz", "rcu_nocbs=all",
		"--baseline /devbulk/baseline.json", "--threshold 40%", "--label 'debian:6.1 rcu_nocbs=all'", "memory: 2048", "|| test $? -eq 1 -o $? -eq 4"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("no %q in\n%s", want, buf.String())
		}
	}
	path := t.TempDir() + "/job.yaml"
	os.WriteFile(path, buf.Bytes(), 0o644)
	j, err := ReadJob(path)
	if err != nil || j.Kernel != "/srv/art/vmlinuz" {
		t.Errorf("ReadJob: %+v, %v", j, err)
	}
	os.WriteFile(path, []byte("device_type: qemu\nmetadata: {devbulk.version: x}\nactions: [{test: {definitions: [{name: ltp}]}}]\n"), 0o644)
	if _, err := ReadJob(path); !errors.Is(err, ErrNotDevbulk) {
		t.Errorf("another job: %v", err)
	}
}

func readFile(t *testing.T, path string) *Run {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	run, err := Read(f)
	if err != nil {
		t.Fatal(err)
	}
	return run
}

// scaled is a copy of r with its ns/op values times f.
func scaled(r *check.Results, f float64) *check.Results {
	out := *r
	out.Scenarios = nil
	for _, sc := range r.Scenarios {
		var lines []check.Line
		for _, l := range sc.Lines {
			var vals []check.Value
			for _, v := range l.Values {
				if v.Unit == check.UnitNsPerOp {
					v.Value *= f
				}
				vals = append(vals, v)
			}
			l.Values = vals
			lines = append(lines, l)
		}
		sc.Lines = lines
		out.Scenarios = append(out.Scenarios, sc)
	}
	return &out
}

// A log whose results lines were damaged on the console still reads: from
// its cases, and it says why.
func TestDamagedLogFallsBackToCases(t *testing.T) {
	b, err := os.ReadFile("testdata/lava-run.log")
	if err != nil {
		t.Fatal(err)
	}
	damaged := strings.Replace(string(b), "devbulk-results 2/", "devbulk-results 2/x", 1)
	run, err := Read(strings.NewReader(damaged))
	if err != nil || run.Results != nil || run.Damaged == "" {
		t.Fatalf("Read: %v, results %v, damaged %q", err, run.Results != nil, run.Damaged)
	}
	doc, err := run.Document()
	if err != nil || len(doc.Scenarios) != 3 || len(doc.Scenarios[0].Lines) != 5 {
		t.Errorf("Document from the cases: %v", err)
	}
}

// Measurements keep two decimals at most, without float noise.
func TestFormatMeasurement(t *testing.T) {
	for in, want := range map[float64]string{357070.06000000006: "357070.06", 2128416: "2128416", 390037.85: "390037.85", 0.5: "0.5"} {
		if got := formatMeasurement(in); got != want {
			t.Errorf("formatMeasurement(%v) = %s, want %s", in, got, want)
		}
	}
}

// A sample's case is SCENARIO.N: the check's own case and other names are
// not samples.
func TestSampleScenario(t *testing.T) {
	for name, want := range map[string]string{"dummy.1": "dummy", "a-b_c.12": "a-b_c", CheckCase: "", "dummy": "", "dummy.": "",
		"dummy.1x": "", ".1": "", "du mmy.1": "", strings.Repeat("a", 65) + ".1": "", "a.b.1": ""} {
		if got, ok := sampleScenario(name); ok != (want != "") || ok && got != want {
			t.Errorf("%q: scenario %q (%v), want %q", name, got, ok, want)
		}
	}
}

// ReadRun takes a check's results whatever form they came in: a results
// document, or a job's log; JSON of another tool is not taken for a log.
func TestReadRun(t *testing.T) {
	doc := []byte(`{"meta": {"tool": "devbulk", "suite": "quick", "kernel": "6.18"}, "scenarios": []}`)
	if r, damaged, err := ReadRun(doc); err != nil || damaged != "" || r.Meta.Suite != "quick" {
		t.Errorf("a results document: %+v, %q, %v", r, damaged, err)
	}
	if _, _, err := ReadRun([]byte(`{"tool": "other"}`)); err == nil || !strings.Contains(err.Error(), "not a devbulk check results document") {
		t.Errorf("another tool's JSON: %v", err)
	}
}

// A saved file is told by its content: a kernel matrix, a run (a LAVA
// export labelled with its file's name), or too large to be either.
func TestReadSaved(t *testing.T) {
	export, err := ReadSaved("testdata/lavacli-results.yaml")
	if err != nil || export.Matrix != nil || export.Run == nil || export.Run.Meta.Label != "lavacli-results.yaml" {
		t.Fatalf("export: %+v, %v", export, err)
	}
	m, err := check.MatrixOf(25, export.Run, export.Run)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "matrix.json")
	b, _ := json.Marshal(m)
	os.WriteFile(path, b, 0o644)
	if saved, err := ReadSaved(path); err != nil || saved.Matrix == nil || saved.Run != nil {
		t.Errorf("matrix: %+v, %v", saved, err)
	}
	defer func(was int) { maxSaved = was }(maxSaved)
	maxSaved = 1 << 20
	if _, err := ReadSaved("/dev/zero"); err == nil || !strings.Contains(err.Error(), "larger than 1 MiB") {
		t.Errorf("/dev/zero: %v", err)
	}
}
