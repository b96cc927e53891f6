package bench

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/devbulk/devbulk"
	"github.com/devbulk/devbulk/internal/result"
	"github.com/devbulk/devbulk/kprofile"
)

// PhaseProfile is where the phases of one count, phase ("create" or
// "delete") and strategy spent their time, over all their cycles: each
// function's total, its calls, and its share of the phases' wall time
// (see kprofile).
type PhaseProfile struct {
	Count    int
	Phase    string
	Strategy string
	Cycles   int
	WallNS   int64 // the cycles' wall time in all
	Entries  []kprofile.Entry
	// UnattributedNS is WallNS less everything traced.
	UnattributedNS int64
}

// Profiles sums the phases' profiles (--profile) by count, phase and
// strategy, by count (smallest first; each count's create first, then its
// move strategies, then its delete strategies, in the order they ran);
// entries largest first.
func (r *Report) Profiles() []PhaseProfile {
	var out []PhaseProfile
	for _, c := range r.Runs {
		out = addProfile(out, c.Count, &c.Create)
	}
	for _, c := range r.Runs {
		if c.Move != nil {
			out = addProfile(out, c.Count, c.Move)
		}
	}
	for _, c := range r.Runs {
		out = addProfile(out, c.Count, &c.Delete)
	}
	slices.SortStableFunc(out, func(a, b PhaseProfile) int { return a.Count - b.Count })
	for i := range out {
		pp := &out[i]
		units := int64(pp.Count * pp.Cycles)
		for j := range pp.Entries {
			e := &pp.Entries[j]
			e.PerDeviceNS = e.TotalNS / max(1, units)
			e.Share = float64(e.TotalNS) / float64(max(1, pp.WallNS))
		}
		slices.SortStableFunc(pp.Entries, func(a, b kprofile.Entry) int { return int(b.TotalNS - a.TotalNS) })
	}
	return out
}

// addProfile adds phase d's profile, if it has one, to its count's,
// phase's and strategy's sum in out.
func addProfile(out []PhaseProfile, count int, d *Phase) []PhaseProfile {
	if d.Profile == nil {
		return out
	}
	i := slices.IndexFunc(out, func(p PhaseProfile) bool {
		return p.Count == count && p.Phase == d.Name && p.Strategy == d.Strategy
	})
	if i < 0 {
		out = append(out, PhaseProfile{Count: count, Phase: d.Name, Strategy: d.Strategy})
		i = len(out) - 1
	}
	pp := &out[i]
	pp.Cycles++
	pp.WallNS += d.WallNS
	pp.UnattributedNS += d.UnattributedNS
	for _, e := range d.Profile {
		j := slices.IndexFunc(pp.Entries, func(x kprofile.Entry) bool { return x.Function == e.Function })
		if j < 0 {
			pp.Entries = append(pp.Entries, kprofile.Entry{Function: e.Function})
			j = len(pp.Entries) - 1
		}
		pp.Entries[j].Calls += e.Calls
		pp.Entries[j].TotalNS += e.TotalNS
		pp.Entries[j].InclusiveNS += e.InclusiveNS
	}
	return out
}

// writeProfiles prints, for each count, phase and strategy, where the
// time went.
func (r *Report) writeProfiles(w io.Writer) error {
	for _, pp := range r.Profiles() {
		fmt.Fprintf(w, "\nN=%d %s %s: where the time went (%s, wall %s in all):\n", pp.Count, pp.Phase, pp.Strategy,
			devbulk.Plural(pp.Cycles, "cycle"), result.FormatNS(pp.WallNS))
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "function\tcalls\ttotal\tper device\tshare\t")
		for _, e := range pp.Entries {
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%.1f%%\t\n", e.Function, e.Calls, result.FormatNS(e.TotalNS), result.FormatNS(e.PerDeviceNS), 100*e.Share)
		}
		fmt.Fprintf(tw, "unattributed\t\t%s\t%s\t%.1f%%\t\n", result.FormatNS(pp.UnattributedNS),
			result.FormatNS(pp.UnattributedNS/int64(max(1, pp.Count*pp.Cycles))), 100*float64(pp.UnattributedNS)/float64(max(1, pp.WallNS)))
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if len(r.Profiles()) > 0 {
		fmt.Fprintln(w, "\ntotal = time in the function less the traced functions it called (each wait charged once, to itself, "+
			"and named by its caller); unattributed = wall less every traced call: devbulk, netlink, scheduling, untraced kernel work")
		if len(r.Untraceable) > 0 {
			fmt.Fprintf(w, "not traceable on this kernel (inlined, or absent), counted in their callers: %s\n", strings.Join(r.Untraceable, ", "))
		}
	}
	return nil
}
