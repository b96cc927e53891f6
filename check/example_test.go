package check_test

import (
	"fmt"

	"github.com/devbulk/devbulk"
	"github.com/devbulk/devbulk/check"
)

// Two runs of one benchmark, six repetitions each: the second is about 49%
// slower, which the Mann-Whitney U test calls significant.
func ExampleCompare() {
	run := func(kernel string, nsPerDevice ...float64) *check.Results {
		r := &check.Results{Meta: check.Meta{Header: devbulk.Header{Tool: "devbulk", Kernel: kernel}}}
		sc := check.Scenario{Name: "dummy"}
		for _, v := range nsPerDevice {
			sc.Lines = append(sc.Lines, check.Line{Name: "Delete/kind=dummy/strategy=group/n=1000", Iters: 1000,
				Values: []check.Value{{Value: v, Unit: check.UnitNsPerOp}}})
		}
		r.Scenarios = append(r.Scenarios, sc)
		return r
	}
	base := run("6.1", 300e3, 310e3, 305e3, 298e3, 302e3, 307e3)
	cur := run("6.18", 450e3, 460e3, 455e3, 470e3, 452e3, 449e3)
	c := check.Compare(base, cur, 10)
	cmp := c.Scenarios[0].Comparisons[0]
	fmt.Printf("%s: %+.0f%% p=%.3f %s; exit %d\n", cmp.Benchmark, cmp.DeltaPct, cmp.P, cmp.Verdict, c.ExitCode())
	// Output: Delete/kind=dummy/strategy=group/n=1000: +49% p=0.002 regression; exit 1
}
