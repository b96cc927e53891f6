package charts

import (
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/devbulk/devbulk/bisect"
)

func TestBisectChart(t *testing.T) {
	var specs []string
	for _, n := range []string{"47", "48", "49", "50", "51"} {
		specs = append(specs, "linux-image-6.1.0-"+n+"-cloud-amd64")
	}
	metric := "Delete/kind=dummy/strategy=serial/n=100"
	ms := func(v float64) map[string][]float64 {
		return map[string][]float64{metric: {v * 1e6, v * 1.01e6, v * 0.99e6}}
	}
	r := &bisect.Result{Specs: specs, Metric: metric, Samples: map[int]map[string][]float64{0: ms(17), 2: ms(17.5), 3: ms(57), 4: ms(56)},
		Steps: []bisect.Step{{Index: 2, Verdict: bisect.Good}, {Index: 3, Verdict: bisect.Bad}, {Index: 1, Verdict: bisect.Skip}}}
	p, err := Bisect(r)
	if err != nil {
		t.Fatal(err)
	}
	texts := drawnText(p)
	for _, want := range []string{"devbulk bisect: " + metric, "good end", "bad end", "47", "51", "kernel configuration, in list order"} {
		if !strings.Contains(texts, want) {
			t.Errorf("no %q in %q", want, texts)
		}
	}
	if err := WriteSVG(io.Discard, p); err != nil {
		t.Error(err)
	}
	if _, err := Bisect(&bisect.Result{Specs: specs, Metric: metric}); err == nil {
		t.Error("a bisection that measured nothing was drawn")
	}
}

func TestDistinct(t *testing.T) {
	for _, c := range []struct{ in, want []string }{
		{[]string{"linux-image-6.1.0-47-cloud-amd64", "linux-image-6.1.0-57-cloud-amd64"}, []string{"47", "57"}},
		{[]string{"debian:6.1 bisect.step=0", "debian:6.1 bisect.step=1 rcupdate.rcu_normal=1"}, []string{"0", "1 rcupdate.rcu_normal=1"}},
		{[]string{"a", "a"}, []string{"0", "1"}},
	} {
		if got := distinct(c.in); !slices.Equal(got, c.want) {
			t.Errorf("distinct(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
