package check

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/devbulk/devbulk/vm"
)

// The quick suite is planned under a minute here; the full suite's vm
// scenarios go to one boot, or are counted as skipped without a VM.
func TestPlanRun(t *testing.T) {
	quick, _ := ParseSuite(bytes.NewReader(QuickSuite()))
	full, _ := ParseSuite(bytes.NewReader(FullSuite()))
	p := PlanRun(quick, RunOptions{})
	if len(p.Here) != len(quick.Scenarios) || len(p.InVM) != 0 || p.Total() > time.Minute || p.Total() < 10*time.Second {
		t.Errorf("quick: %d here, %d in the VM, %v", len(p.Here), len(p.InVM), p.Total())
	}
	if got := p.Say("quick"); got != "the quick suite: 4 scenarios on this kernel, about "+Rough(p.Total()) {
		t.Errorf("said %q", got)
	}
	skipped := PlanRun(full, RunOptions{})
	if skipped.SkippedVM != 8 || len(skipped.InVM) != 0 || !strings.Contains(skipped.Say("full"), "8 vm scenarios skipped (--vm runs them: about") {
		t.Errorf("full without a VM: %+v, %q", skipped, skipped.Say("full"))
	}
	withVM := PlanRun(full, RunOptions{VM: &vm.Kernel{}})
	if len(withVM.InVM) != 8 || withVM.VMTime <= perBoot || withVM.Total() <= skipped.Total() || !strings.Contains(withVM.Say("full"), "and 8 in a VM (one boot") {
		t.Errorf("full with a VM: %d in it, %v; %q", len(withVM.InVM), withVM.VMTime, withVM.Say("full"))
	}
	if all := PlanRun(quick, RunOptions{VM: &vm.Kernel{}, AllInVM: true}); len(all.InVM) != 4 || all.VMTime < 4*p.HereTime {
		t.Errorf("quick all in the VM: %+v", all)
	}
}

func TestEstimate(t *testing.T) {
	serial := ScenarioSpec{Repeat: 6, Bench: &BenchSpec{Kind: "ifb", Count: 100, Delete: []string{"serial"}}}
	group := ScenarioSpec{Repeat: 6, Bench: &BenchSpec{Kind: "ifb", Count: 100, Delete: []string{"group"}}}
	bridge := ScenarioSpec{Repeat: 6, Bench: &BenchSpec{Kind: "bridge", Count: 100, Delete: []string{"group"}}}
	if s, g, b := serial.Estimate(false), group.Estimate(false), bridge.Estimate(false); s < 10*time.Second || g > 2*time.Second || b < 10*time.Second {
		t.Errorf("100 ifb by serial %v, by group %v; 100 bridges by group %v (they wait per device)", s, g, b)
	}
	if serial.Estimate(true) != inTCG*serial.Estimate(false) {
		t.Error("a TCG guest's estimate is not the host's times inTCG")
	}
}

// The time left is the plan's, rescaled by how the scenarios done so far
// compared with their estimates.
func TestCountdown(t *testing.T) {
	a := ScenarioSpec{Name: "a", Repeat: 1, Bench: &BenchSpec{Kind: "ifb", Count: 1000, Delete: []string{"group"}}}
	b := a
	b.Name = "b"
	c := newCountdown(Plan{Here: []ScenarioSpec{a, b}, HereTime: a.Estimate(false) + b.Estimate(false)})
	var said []string
	say := func(s string) { said = append(said, s) }
	c.next(a, say)
	c.start = c.start.Add(-3 * a.Estimate(false)) // a took three times its estimate
	c.next(b, say)
	if len(said) != 2 || !strings.HasPrefix(said[0], "scenario 1 of 2 here: a (about ") || said[1] != "scenario 2 of 2 here: b (about "+Rough(3*b.Estimate(false))+" left)" {
		t.Errorf("said %q", said)
	}
}

func TestRough(t *testing.T) {
	for d, want := range map[time.Duration]string{time.Second: "5 s", 42 * time.Second: "40 s", 99 * time.Second: "100 s", 9 * time.Minute: "9 min"} {
		if got := Rough(d); got != want {
			t.Errorf("Rough(%v) = %q, want %q", d, got, want)
		}
	}
}
