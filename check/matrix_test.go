package check

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// matrixFixture is three configurations and a fourth that did not boot:
// A the reference, B a clear regression of the group delete, C the same
// kernel as A with rcu_nocbs=all and within noise, D skipped.
func matrixFixture() *Matrix {
	a := results("6.1.0", Scenario{Name: "dummy", Lines: lines(group, 300, 310, 305, 298, 302, 307)},
		Scenario{Name: "vlan", Lines: lines(group, 300, 310, 305, 298, 302, 307)})
	b := results("6.12.0", Scenario{Name: "dummy", Lines: lines(group, 450, 460, 455, 470, 452, 449)},
		Scenario{Name: "vlan", Skip: "this kernel cannot create vlan"})
	c := results("6.1.0", Scenario{Name: "dummy", Lines: lines(group, 296, 312, 301, 309, 299, 304)},
		Scenario{Name: "vlan", Lines: lines(group, 296, 312, 301, 309, 299, 304)})
	m := &Matrix{Threshold: 25, Columns: []Column{
		{Label: "debian:6.1", Package: "linux-image-6.1.0-57-cloud-amd64", Results: a},
		{Label: "debian:6.12", Package: "linux-image-6.12.118+deb12-cloud-amd64", Results: b},
		{Label: "debian:6.1 rcu_nocbs=all", Package: "linux-image-6.1.0-57-cloud-amd64", Results: c},
		{Label: "debian:6.12-rt", Skip: "VM on debian:6.12-rt: the guest kernel did not boot to devbulk; its console ends:\n..."},
	}}
	for i := range m.Columns {
		if r := m.Columns[i].Results; r != nil {
			r.Meta.Label = m.Columns[i].Label
		}
	}
	m.compare()
	return m
}

// One row per benchmark, a column per configuration: A's median, the
// others' change against A with its interval and a mark where significant
// beyond the threshold; a skip in its column, and the exit status of a
// regression.
func TestMatrixTable(t *testing.T) {
	m := matrixFixture()
	var b bytes.Buffer
	if err := m.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^scenario\s+benchmark\s+A\s+B\s+C\s+D$`),
		regexp.MustCompile(`(?m)^  D  debian:6\.12-rt  SKIP: VM on debian:6\.12-rt: the guest kernel did not boot to devbulk; its console ends:$`),
		regexp.MustCompile(`(?m)^dummy\s+Delete/kind=dummy/strategy=group/n=1000\s+0\.303µs ±2% \(6\)\s+0\.453µs \+49% \[\+47\.\.\+53\] ▲\s+0\.302µs -0\.3% \[-3\.\.\+2\] ~\s+skipped$`),
		regexp.MustCompile(`(?m)^vlan\s+Delete/kind=dummy/strategy=group/n=1000\s+0\.303µs ±2% \(6\)\s+SKIP: this kernel cannot create vlan\s+0\.302µs -0\.3% \[-3\.\.\+2\] ~\s+skipped$`),
	} {
		if !want.MatchString(out) {
			t.Errorf("no match for %s in\n%s", want, out)
		}
	}
	if m.ExitCode() != ExitFail {
		t.Errorf("exit %d with a regression in B", m.ExitCode())
	}
	// Read back from its JSON document, the matrix compares the same.
	doc, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var again Matrix
	if err := json.Unmarshal(doc, &again); err != nil {
		t.Fatal(err)
	}
	var b2 bytes.Buffer
	if err := again.WriteTable(&b2); err != nil || b2.String() != out {
		t.Errorf("the JSON document reads back as another table (%v):\n%s", err, b2.String())
	}
}

// The matrix's KTAP is a test per configuration with a subtest per
// scenario, as the kernel's own parser reads it: A passes, B fails on its
// regression (its vlan skipped), C passes, D is skipped.
func TestMatrixKTAPThroughKunitParser(t *testing.T) {
	var b bytes.Buffer
	if err := matrixFixture().WriteKTAP(&b); err != nil {
		t.Fatal(err)
	}
	text, doc := kunitParse(t, b.Bytes())
	if !strings.Contains(text, "Ran 7 tests: passed: 4, failed: 1, skipped: 2\n") {
		t.Errorf("kunit.py's summary:\n%s\nfrom\n%s", text, b.String())
	}
	type test struct{ Name, Status string }
	var parsed struct {
		Groups []struct {
			Name  string `json:"name"`
			Cases []test `json:"test_cases"`
		} `json:"sub_groups"`
		Cases []test `json:"test_cases"`
	}
	if err := json.Unmarshal(doc, &parsed); err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(parsed.Cases)
	for _, g := range parsed.Groups {
		got += fmt.Sprintf(" %s%v", g.Name, g.Cases)
	}
	want := "[{D debian:6.12-rt SKIP}] A debian:6.1[{dummy PASS} {vlan PASS}] B debian:6.12[{dummy FAIL} {vlan SKIP}] C debian:6.1 rcu_nocbs=all[{dummy PASS} {vlan PASS}]"
	if got != want {
		t.Errorf("kunit.py read %s\nwant %s", got, want)
	}
}

// Three configurations in one benchstat stream, each with its label as the
// kernel key: two of them share a release, and benchstat -col kernel still
// gives each its own column.
func TestMatrixBenchstat(t *testing.T) {
	var b bytes.Buffer
	if err := WriteBenchstat(&b, true, matrixFixture().Results()...); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "matrix.txt")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "tool", "benchstat", "-col", "kernel", path).CombinedOutput()
	if err != nil {
		t.Fatalf("benchstat -col kernel: %v\n%s", err, out)
	}
	header := regexp.MustCompile(`(?m)^\s+│\s+debian:6\.1\s+│\s+debian:6\.12\s+│\s+debian:6\.1 rcu_nocbs=all\s+│`)
	if !header.Match(out) {
		t.Errorf("benchstat -col kernel did not give each configuration a column:\n%s\n%s", out, b.String())
	}
}

// A configuration's boots add up: lines appended, a scenario skipped in
// one boot and run in another counts as run, an error kept.
func TestResultsMerge(t *testing.T) {
	a := results("6.1.0", Scenario{Name: "dummy", Lines: lines(group, 300, 310, 305)}, Scenario{Name: "vlan", Skip: "no 8021q"})
	b := results("6.1.0", Scenario{Name: "dummy", Lines: lines(group, 298, 302, 307)}, Scenario{Name: "vlan", Lines: lines(group, 1)},
		Scenario{Name: "gre", Error: "boom"})
	m := a.merge(b)
	if d := m.scenario("dummy"); len(d.Lines) != 6 {
		t.Errorf("dummy: %d lines, want 6", len(d.Lines))
	}
	if v := m.scenario("vlan"); v.Skip != "" || len(v.Lines) != 1 {
		t.Errorf("vlan: %+v", v)
	}
	if g := m.scenario("gre"); g == nil || g.Error != "boom" {
		t.Errorf("gre: %+v", g)
	}
	if (*Results)(nil).merge(b) != b {
		t.Error("the first boot's results are not taken as they are")
	}
}

// A boot that did not come up (Run's SkipUnbootable: each scenario
// skipped) while another boot of the configuration ran: its samples are
// short, and the scenario says why instead of passing as run.
func TestResultsMergeLostBoot(t *testing.T) {
	noBoot := "VM on debian: the guest kernel did not boot to devbulk; its console ends: ..."
	ran := func() *Results { return results("6.1.0", Scenario{Name: "dummy", Lines: lines(group, 300, 310, 305)}) }
	lost := func() *Results { return results("", Scenario{Name: "dummy", Skip: noBoot}) }
	for name, m := range map[string]*Results{"lost second": ran().merge(lost()), "lost first": lost().merge(ran())} {
		if d := m.scenario("dummy"); len(d.Lines) != 3 || d.Skip != "" || !strings.Contains(d.Error, noBoot) {
			t.Errorf("%s: %d lines, skip %q, error %q; want 3 lines and the lost boot's reason as the error", name, len(d.Lines), d.Skip, d.Error)
		}
	}
}

// Runs made elsewhere make a matrix: each column named by its label, else
// its kernel; a run that could run nothing is a skipped column; the table
// says the runs were read back, not booted here.
func TestMatrixOfRunsMadeElsewhere(t *testing.T) {
	a := results("6.1.0", Scenario{Name: "dummy", Lines: lines(group, 300, 310, 305, 298, 302, 307)})
	a.Meta.Label = "debian:6.1"
	b := results("6.12.0", Scenario{Name: "dummy", Lines: lines(group, 450, 460, 455, 470, 452, 449)})
	c := results("6.13.0", Scenario{Name: "dummy", Skip: "this kernel cannot create dummy"})
	m, err := MatrixOf(25, a, b, c)
	if err != nil {
		t.Fatal(err)
	}
	if m.Columns[0].Label != "debian:6.1" || m.Columns[1].Label != "6.12.0" || m.Columns[2].Skip == "" {
		t.Errorf("columns: %+v", m.Columns)
	}
	if got := m.Columns[1].Scenarios[0].Comparisons[0].Verdict; got != Regression {
		t.Errorf("B against A: %s, want regression", got)
	}
	var buf bytes.Buffer
	m.WriteTable(&buf)
	if !strings.Contains(buf.String(), "runs made elsewhere") {
		t.Errorf("table header:\n%s", buf.String())
	}
	if _, err := MatrixOf(25, a); err == nil {
		t.Error("a matrix of one run")
	}
}
