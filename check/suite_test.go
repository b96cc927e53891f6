package check

import (
	"bytes"
	"strings"
	"testing"

	"github.com/devbulk/devbulk/batch"
	"github.com/devbulk/devbulk/devices"
)

func TestFullSuiteParses(t *testing.T) {
	s, err := ParseSuite(bytes.NewReader(FullSuite()))
	if err != nil {
		t.Fatal(err)
	}
	vm := map[string]bool{}
	for _, sc := range s.Scenarios {
		if sc.VM && sc.Bench != nil {
			vm[sc.Bench.Kind] = true
		}
		if sc.Repeat != defaultRepeat && sc.Repeat < 6 {
			t.Errorf("%s: repeat %d gives no confidence interval", sc.Name, sc.Repeat)
		}
	}
	for _, k := range []string{"dummy", "vlan", "ipip", "gre"} {
		if !vm[k] {
			t.Errorf("the full suite does not run %s in the VM", k)
		}
	}
}

// The hunt walks every delete strategy on every kind it applies to, a move
// of each kind that moves, and the namespace payloads, all in the VM (the
// debug kernel), once each: its point is the kernel's complaints, not a
// confidence interval.
func TestHuntSuiteWalksEveryPath(t *testing.T) {
	raw, ok := NamedSuite("hunt")
	if !ok {
		t.Fatal("no hunt suite")
	}
	s, err := ParseSuite(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	walked := map[string]bool{}
	kinds := map[string]bool{}
	for _, sc := range s.Scenarios {
		if !sc.VM || sc.Repeat != 1 {
			t.Errorf("%s: vm %v, repeat %d; want the VM, once", sc.Name, sc.VM, sc.Repeat)
		}
		if b := sc.Bench; b != nil {
			kinds[b.Kind] = true
			for _, d := range b.Delete {
				walked["delete "+d] = true
			}
			for _, m := range b.Move {
				walked["move "+m] = true
			}
		}
	}
	for _, d := range batch.DeleteStrategies() {
		if !walked["delete "+string(d)] {
			t.Errorf("no scenario deletes by %s", d)
		}
	}
	for _, k := range devices.All() {
		if !kinds[k.Name] {
			t.Errorf("no scenario of kind %s", k.Name)
		}
	}
	for _, m := range []string{"serial", "group"} {
		if !walked["move "+m] {
			t.Errorf("no scenario moves by %s", m)
		}
	}
	if _, ok := NamedSuite("hnt"); ok {
		t.Error("a suite named hnt")
	}
}

func TestSuiteErrors(t *testing.T) {
	for suite, want := range map[string]string{
		`{"name":"x","scenarios":[]}`: "no scenarios",
		`{"name":"x","scenarios":[{"name":"a b","bench":{"kind":"ifb","count":10,"delete":["group"]}}]}`:                                               "name must be 1..64 of A-Z a-z 0-9 _ -",
		`{"name":"x","scenarios":[{"name":"a","bench":{"kind":"ifb","count":0,"delete":["group"]}}]}`:                                                  "count 0 out of range: ifb takes 1..",
		`{"name":"x","scenarios":[{"name":"a","repeat":101,"bench":{"kind":"ifb","count":1,"delete":["group"]}}]}`:                                     "repeat 101 out of range: 1..100",
		`{"name":"x","scenarios":[{"name":"a","bench":{"kind":"ifb","count":1,"delete":["rmmod"]}}]}`:                                                  `unknown delete strategy "rmmod"`,
		`{"name":"x","scenarios":[{"name":"a","bench":{"kind":"wormhole","count":1,"delete":["group"]}}]}`:                                             "wormhole",
		`{"name":"x","scenarios":[{"name":"a","bench":{"kind":"ifb","count":1,"delete":["group"],"bystander":"ping"}}]}`:                               `unknown operation "ping"`,
		`{"name":"x","scenarios":[{"name":"a"}]}`:                                                                                                      "exactly one of bench and netns",
		`{"name":"x","scenarios":[{"name":"a","netns":{"scenario":"churn","workers":0,"per_worker":1}}]}`:                                              "workers 0 out of range: 1..1024",
		`{"name":"x","scenarios":[{"name":"a","netns":{"scenario":"spin"}}]}`:                                                                          "valid are churn, create, sequential",
		`{"name":"x","scenarios":[{"name":"a","netns":{"scenario":"churn","workers":1024,"per_worker":18014398509481985}}]}`:                           "each out of range 1..1000000",
		`{"name":"x","scenarios":[{"name":"a","netns":{"scenario":"sequential","count":2000000}}]}`:                                                    "out of range: 1..1000000",
		`{"name":"x","scenarios":[{"name":"a","bench":{"kind":"ifb","count":1,"delete":["group"]},"speed":"ludicrous"}]}`:                              `unknown field "speed"`,
		`{"name":"x","scenarios":[{"name":"a","netns":{"scenario":"sequential","count":1}},{"name":"a","netns":{"scenario":"sequential","count":1}}]}`: `name "a" used twice`,
	} {
		_, err := ParseSuite(strings.NewReader(suite))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", suite, err, want)
		}
	}
}

func TestParseThreshold(t *testing.T) {
	for in, want := range map[string]float64{"10%": 10, "2.5": 2.5, "0%": 0} {
		if got, err := ParseThreshold(in); err != nil || got != want {
			t.Errorf("%q: %v, %v", in, got, err)
		}
	}
	for _, in := range []string{"-1%", "ten", "10%%", "2000%", "10abc", "nan", "NaN%", "inf"} {
		if _, err := ParseThreshold(in); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
}

func TestScenarioName(t *testing.T) {
	for name, want := range map[string]bool{"a-b_C9": true, strings.Repeat("x", 64): true, strings.Repeat("x", 65): false,
		"": false, "a b": false, "a.1": false, "é": false, "a/b": false} {
		if ScenarioName(name) != want {
			t.Errorf("ScenarioName(%q) = %v", name, !want)
		}
	}
}

func TestScenarioCommandAndBenchmarks(t *testing.T) {
	s, err := ParseSuite(bytes.NewReader(FullSuite()))
	if err != nil {
		t.Fatal(err)
	}
	sc, names, ok := s.Scenario("dummy-serial")
	if !ok {
		t.Fatalf("no dummy-serial in %v", names)
	}
	if got := strings.Join(sc.Command(), " "); got != "bench --kind dummy --count 100 --delete serial --repeat 6" {
		t.Errorf("command %q", got)
	}
	if got := sc.Benchmarks(); len(got) != 2 || got[1] != "Delete/kind=dummy/strategy=serial/n=100" {
		t.Errorf("benchmarks %v", got)
	}
	churn, _, _ := s.Scenario("netns-churn-veth")
	if got := strings.Join(churn.Command(), " "); got != "netns churn --workers 2 --per-worker 100 --payload veth --repeat 6" {
		t.Errorf("command %q", got)
	}
	if _, names, ok := s.Scenario("nope"); ok || len(names) != len(s.Scenarios) {
		t.Errorf("a scenario the suite lacks: %v %v", ok, names)
	}
}

// A bisection's metric: the scenario's headline when none is named (a
// bench's first delete, a netns scenario's own), a prefix of what it
// measures, or an error naming what it does measure.
func TestScenarioMetric(t *testing.T) {
	s, err := ParseSuite(bytes.NewReader(FullSuite()))
	if err != nil {
		t.Fatal(err)
	}
	serial, _, _ := s.Scenario("dummy-serial")
	churn, _, _ := s.Scenario("netns-churn-veth")
	for _, c := range []struct {
		sc          ScenarioSpec
		metric, out string
		bad         bool
	}{
		{serial, "", "Delete/kind=dummy/strategy=serial/n=100", false},
		{serial, "Create", "Create", false},
		{serial, "Delete/kind=ifb", "", true},
		{churn, "", "NetnsChurn", false},
		{churn, "NetnsChurnDrain", "NetnsChurnDrain", false},
		{churn, "Delete", "", true},
	} {
		got, err := c.sc.Metric(c.metric)
		if got != c.out || (err != nil) != c.bad || c.bad && !strings.Contains(err.Error(), c.sc.Benchmarks()[0]) {
			t.Errorf("%s --metric %q: %q, %v; want %q (error %v)", c.sc.Name, c.metric, got, err, c.out, c.bad)
		}
	}
}

func TestGitBisect(t *testing.T) {
	sc := func(verdict string, errText string) ScenarioComparison {
		return ScenarioComparison{Name: "a", Error: errText, Comparisons: []Comparison{{Verdict: verdict}}}
	}
	for _, c := range []struct {
		r    Report
		want int
	}{
		{Report{Scenarios: []ScenarioComparison{sc(Same, "")}}, 0},
		{Report{Scenarios: []ScenarioComparison{sc(Improvement, "")}}, 0},
		{Report{Scenarios: []ScenarioComparison{sc(Regression, "")}}, 1},
		{Report{Scenarios: []ScenarioComparison{sc(Same, "no boot")}}, 125},
		{Report{Scenarios: []ScenarioComparison{sc(Missing, "")}}, 125},
		{Report{Scenarios: []ScenarioComparison{{Name: "a", Skip: "no dummy"}}}, 125},
	} {
		if got := c.r.GitBisect(); got != c.want {
			t.Errorf("%+v: %d, want %d", c.r.Scenarios, got, c.want)
		}
	}
}
