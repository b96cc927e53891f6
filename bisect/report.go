package bisect

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/devbulk/devbulk/internal/result"
)

// Words is the answer in one sentence, as a maintainer's mail opens: what
// changed, by how much, and between which kernels.
func (r *Result) Words(scenario string) string {
	n := len(r.Specs)
	switch {
	case r.Metric == "":
		return "devbulk bisect: nothing measured"
	case !r.Ends.Significant:
		return fmt.Sprintf("devbulk found no significant change of %s (%s) between %s and %s: %s; nothing to bisect",
			r.Metric, scenario, r.Specs[0], r.Specs[n-1], r.Ends)
	}
	kind := "regression"
	if r.Ends.Ratio < 1 {
		kind = "improvement"
	}
	if !r.Found {
		return fmt.Sprintf("devbulk found a %+.0f%% %s of %s (%s) between %s and %s; the search was stopped before it named the kernel (run the same command again to resume)",
			r.Ends.Pct(), kind, r.Metric, scenario, r.Specs[0], r.Specs[n-1])
	}
	s := fmt.Sprintf("devbulk found a %+.0f%% %s of %s (%s) between %s (last good) and %s (first bad)",
		r.Ends.Pct(), kind, r.Metric, scenario, r.Specs[r.LastGood], r.Specs[r.FirstBad])
	switch {
	case r.Confirmation == nil:
		s += "; not confirmed (the confirmation did not finish)"
	case r.Confirmed:
		s += "; confirmed by measuring both again: " + r.Confirmation.String()
	default:
		s += "; NOT confirmed: measured again, the two differ by " + r.Confirmation.String()
	}
	s += r.revertWords()
	if len(r.Between) > 0 {
		var names []string
		for _, k := range r.Between {
			names = append(names, r.Specs[k])
		}
		s += "; skipped between them, so the first bad may also be: " + strings.Join(names, ", ")
	}
	return s
}

// WriteReport writes the answer for people: the sentence, the table of
// every benchmark the scenario measures on the last good and first bad
// kernels (LKP's %stddev %change %stddev), the steps, and the commands
// that reproduce it.
func (r *Result) WriteReport(w io.Writer, scenario string, reproduce []string) error {
	fmt.Fprintln(w, r.Words(scenario))
	fmt.Fprintln(w)
	good, bad := 0, len(r.Specs)-1
	samples := r.Samples
	if r.Found {
		good, bad = r.LastGood, r.FirstBad
		if r.Confirm != nil {
			samples = r.Confirm
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%s\t%%stddev\t%%change\t%s\t%%stddev\tbenchmark\t\n", r.Specs[good], r.Specs[bad])
	for _, name := range sortedNames(samples[good]) {
		a, b := samples[good][name], samples[bad][name]
		ma, sa := meanStddevPct(a)
		mb, sb := meanStddevPct(b)
		fmt.Fprintf(tw, "%s\t±%.0f%%\t%+.1f%%\t%s\t±%.0f%%\t%s\t\n", value(ma), sa, (mb/ma-1)*100, value(mb), sb, name)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n(means of %d and %d samples; ns per device, per namespace, or per run for Drain)\n\nsteps:\n", len(samples[good][r.Metric]), len(samples[bad][r.Metric]))
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if len(r.Steps) == 0 {
		fmt.Fprintln(tw, "  none: the ends decided")
	} else {
		fmt.Fprintln(tw, "  kernel\tverdict\tboots\tsamples\ttime\twhy")
	}
	for _, st := range r.Steps {
		fmt.Fprintf(tw, "  %s\t%s\t%d\t%d\t%s\t%s\n", st.Spec, st.Verdict, st.Boots, st.Samples, time.Duration(st.WallNS).Round(time.Second), st.Why)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n%d boots in %s. To reproduce:\n", r.Boots, time.Duration(r.WallNS).Round(time.Second))
	for _, c := range reproduce {
		fmt.Fprintf(w, "  %s\n", c)
	}
	return nil
}

// value writes a time, "-" for none.
func value(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	return result.FormatNS(int64(v))
}

func sortedNames(m map[string][]float64) []string {
	var out []string
	for name := range m {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// meanStddevPct is a sample's mean and its standard deviation as a
// percentage of the mean (LKP's %stddev).
func meanStddevPct(v []float64) (mean, pct float64) {
	if len(v) == 0 {
		return math.NaN(), 0
	}
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	var ss float64
	for _, x := range v {
		ss += (x - mean) * (x - mean)
	}
	if len(v) > 1 && mean != 0 {
		pct = math.Sqrt(ss/float64(len(v)-1)) / mean * 100
	}
	return mean, pct
}

// WriteKTAP writes the bisection as KTAP, for fleets' parsers: the answer
// in a diagnostic line, then a test for the ends, one per step (a skipped
// kernel a SKIP) and one for the confirmation, which fails when the
// answer was not confirmed.
func (r *Result) WriteKTAP(w io.Writer, scenario string) error {
	fmt.Fprintf(w, "KTAP version 1\n1..%d\n# %s\n", len(r.Steps)+2, r.Words(scenario))
	fmt.Fprintf(w, "ok 1 ends # %s against %s: %s\n", r.Specs[len(r.Specs)-1], r.Specs[0], r.Ends)
	for i, st := range r.Steps {
		if st.Verdict == Skip {
			fmt.Fprintf(w, "ok %d step_%d # SKIP %s: %s\n", i+2, st.Index, st.Spec, st.Why)
			continue
		}
		fmt.Fprintf(w, "ok %d step_%d # %s: %s (%s)\n", i+2, st.Index, st.Spec, st.Verdict, st.Why)
	}
	n := len(r.Steps) + 2
	switch {
	case !r.Found:
		_, err := fmt.Fprintf(w, "ok %d confirmation # SKIP nothing to confirm\n", n)
		return err
	case r.Confirmed:
		_, err := fmt.Fprintf(w, "ok %d confirmation # %s\n", n, r.Confirmation)
		return err
	case r.Confirmation == nil:
		_, err := fmt.Fprintf(w, "not ok %d confirmation # not measured: the bisection was stopped\n", n)
		return err
	}
	_, err := fmt.Fprintf(w, "not ok %d confirmation # %s\n", n, r.Confirmation)
	return err
}
