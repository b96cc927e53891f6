package bench

import (
	"bytes"
	"strings"
	"testing"

	"github.com/devbulk/devbulk"
	"github.com/devbulk/devbulk/batch"
	"github.com/devbulk/devbulk/internal/ratio"
)

// cycles makes a bench's runs: for each repetition, one cycle per delete
// strategy, with the given delete walls (ns) and iproute2's.
func cycles(n int, create, ipCreate []int64, deletes map[string][]int64, ipDeletes map[string][]int64) []Cycle {
	var out []Cycle
	for rep := range create {
		for d, walls := range deletes {
			c := Cycle{Count: n, Repeat: rep + 1,
				Create: Phase{Phase: batch.Phase{Name: "create", Strategy: "pipelined", Devices: n, WallNS: create[rep], MsPerDevice: float64(create[rep]) / 1e6 / float64(n)}},
				Delete: Phase{Phase: batch.Phase{Name: "delete", Strategy: d, Devices: n, WallNS: walls[rep]}}}
			if ipCreate != nil {
				c.IPCreate = &Phase{Phase: batch.Phase{WallNS: ipCreate[rep]}}
			}
			if ip := ipDeletes[d]; ip != nil {
				c.IPDelete = &Phase{Phase: batch.Phase{WallNS: ip[rep]}}
			}
			out = append(out, c)
		}
	}
	return out
}

func TestComparisonsAndHeadline(t *testing.T) {
	r := &Report{Runs: cycles(1000,
		[]int64{100e6, 102e6, 98e6, 101e6, 99e6}, []int64{200e6, 204e6, 196e6, 202e6, 198e6},
		map[string][]int64{"serial": {16e9, 16.2e9, 15.8e9, 16.1e9, 15.9e9}, "group": {160e6, 161e6, 159e6, 162e6, 158e6},
			"netns": {161e6, 158e6, 162e6, 157e6, 163e6}},
		map[string][]int64{"group": {160e6, 163e6, 157e6, 161e6, 159e6}})}
	r.compare()
	got := map[string]Comparison{}
	for _, c := range append(r.Comparisons, r.Against...) {
		got[c.Phase+"/"+c.Strategy+"/"+c.A] = c
	}
	if c := got["create/pipelined/devbulk"]; c.Verdict != "devbulk faster" || c.Ratio < 1.9 || c.Ratio > 2.1 || len(c.CI95) != 2 || c.N != 15 {
		t.Errorf("create: %+v; want devbulk faster, ratio 2, a CI, 15 cycles", c)
	}
	if c := got["delete/group/devbulk"]; c.Verdict != devbulk.NoDifference || c.CI95[0] > 1 || c.CI95[1] < 1 {
		t.Errorf("group delete against ip link del group: %+v; want no significant difference", c)
	}
	if _, ok := got["delete/serial/devbulk"]; ok {
		t.Error("serial compared with iproute2, which had no run of it here")
	}
	best := "group"
	if ratio.Median([]float64{161e6, 158e6, 162e6, 157e6, 163e6}) < ratio.Median([]float64{160e6, 161e6, 159e6, 162e6, 158e6}) {
		best = "netns"
	}
	if c := got["delete/serial/"+best]; c.Verdict != best+" faster" || c.Ratio < 90 || c.Ratio > 110 {
		t.Errorf("serial against the fastest batch path (%s): %+v", best, c)
	}
	var b bytes.Buffer
	if err := r.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"ratio = iproute2/devbulk: above 1, devbulk is faster", "N=1000 serial: 100× slower than " + best + " (95% CI ",
		"no significant difference from " + best, "N=1000 create: 0.1 ms per device (95% CI "} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in\n%s", want, b.String())
		}
	}

	// One repetition: ratios, and no conclusion.
	one := &Report{Runs: cycles(1000, []int64{100e6}, []int64{200e6}, map[string][]int64{"serial": {16e9}, "group": {160e6}}, nil)}
	one.compare()
	if c := one.Comparisons[0]; c.Verdict != devbulk.TooFew || c.CI95 != nil {
		t.Errorf("one cycle: %+v; want no conclusion", c)
	}
	b.Reset()
	one.WriteTable(&b)
	if !strings.Contains(b.String(), "N=1000 serial: 100× slower than group in the median of 1 cycle; too few for a confidence interval (use --repeat 5 or more)") {
		t.Errorf("one cycle's headline:\n%s", b.String())
	}
}
