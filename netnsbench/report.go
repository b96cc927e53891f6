package netnsbench

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/devbulk/devbulk"
	"github.com/devbulk/devbulk/bystander"
	"github.com/devbulk/devbulk/internal/result"
)

// WriteTable prints the report for people.
func (r *Report) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "devbulk %s  %s  netns %s\n\n", r.Version, r.Machine(), r.Scenario)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "round\tmode\tworkers\tper worker\tpayload\tcreate\tnetns/s\tsetup p50\tp99\tmax\tuser\tsys\tdevbulk CPU %\tuser/kernel %\trelease\tdrain\tpeak backlog\tpeak slab\t")
	for _, run := range r.Runs {
		drain := "unknown"
		if run.DrainMethod != "" {
			drain = result.FormatNS(run.DrainNS)
		}
		release := "-"
		if run.ReleaseNS > 0 {
			release = result.FormatNS(run.ReleaseNS)
		}
		p50, p99, worst := "-", "-", "-"
		if l := run.Setup; l != nil {
			p50, p99, worst = result.FormatNS(l.P50NS), result.FormatNS(l.P99NS), result.FormatNS(l.MaxNS)
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%s\t%s\t%.0f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%.1f MiB\t\n", max(1, run.Round), run.Mode, run.Workers, run.PerWorker,
			run.Payload, result.FormatNS(run.CreateNS), run.NetnsPerSec, p50, p99, worst, result.FormatNS(run.UserNS),
			result.FormatNS(run.SysNS), percent(run.UserNS+run.SysNS, run.CreateNS), percent(run.UserNS, run.KernelNS),
			release, drain, run.PeakBacklog, float64(run.PeakSlabBytes)/(1<<20))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if r.BystanderIdle != nil {
		fmt.Fprintln(w, bystander.Line(r.BystanderIdle, r.Bystander, "the "+r.Scenario))
	}
	fmt.Fprintln(w, "mode: direct = devbulk unshares each namespace itself; exec = each is an `unshare -n sh -c` process (--compare exec)")
	fmt.Fprintln(w, "devbulk CPU % = devbulk's user+sys time over the create's wall time (100 for each CPU kept busy all along);")
	fmt.Fprintln(w, "user/kernel % = devbulk's user time over every CPU's kernel time (/proc/stat) during the create: the share of the work that is devbulk's own")
	for _, run := range r.Runs {
		switch {
		case !run.Interrupted:
		case run.Created == int64(run.Namespaces):
			fmt.Fprintf(w, "round %d %s: INTERRUPTED once every namespace was made (the drain not measured)\n", max(1, run.Round), run.form())
		default:
			fmt.Fprintf(w, "round %d %s: INTERRUPTED after %s (rates over those; the drain not measured)\n",
				max(1, run.Round), run.form(), outOf(int(run.Created), run.Namespaces, "namespace"))
		}
	}
	for _, run := range r.Runs {
		of := "" // which run, when there are several
		if len(r.Runs) > 1 {
			of = fmt.Sprintf(", round %d, %s", max(1, run.Round), run.Payload)
		}
		if err := writeCurve(w, "creation rate (netns/s over each step"+of+")", run.Rate); err != nil {
			return err
		}
		if run.ExecStep != "" && run.ExecNS > 0 {
			fmt.Fprintf(w, "\nexec step%s, as ip netns exec runs it, in each namespace: %s in %s (%.0f/s): %s\n",
				of, outOf(run.ExecDone, int(run.Created), "namespace"), result.FormatNS(run.ExecNS), run.ExecPerSec, run.ExecStep)
			if err := writeCurve(w, "exec step rate (namespaces/s over each step"+of+")", run.ExecRate); err != nil {
				return err
			}
		}
	}
	if err := r.writeProfiles(w); err != nil {
		return err
	}
	if err := r.writeComparisons(w); err != nil {
		return err
	}
	if r.KernelLog != nil {
		fmt.Fprintln(w)
		r.KernelLog.Write(w)
	}
	if !r.Explain {
		return nil
	}
	fmt.Fprintln(w, "\nsetup = each namespace's unshare and payload (create: and its bind mount; exec mode: its whole unshare -n sh -c process), nearest-rank percentiles over the run's namespaces")
	_, err := fmt.Fprintf(w, "\ndrain = from the last release until %s\n", DrainMethod)
	return err
}

// form names a run in lines about it: its mode and payload ("direct,
// veth:1:moved"), which tell apart the runs of a round.
func (run Run) form() string { return run.Mode + ", " + run.Payload }

// outOf is "n of total things", or "total things" when all were done.
func outOf(n, total int, thing string) string {
	if n == total {
		return devbulk.Plural(total, thing)
	}
	return fmt.Sprintf("%d of %s", n, devbulk.Plural(total, thing))
}

// WriteSeries writes every run's samples as CSV.
func (r *Report) WriteSeries(w io.Writer) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"round", "mode", "payload", "t_ns", "created", "released", "objects", "backlog"})
	for _, run := range r.Runs {
		for _, s := range run.Series {
			_ = cw.Write([]string{strconv.Itoa(max(1, run.Round)), run.Mode, run.Payload, strconv.FormatInt(s.TNS, 10), strconv.FormatInt(s.Created, 10),
				strconv.FormatInt(s.Released, 10), strconv.Itoa(s.Objects), strconv.Itoa(s.Backlog)})
		}
	}
	cw.Flush()
	return cw.Error()
}

func percent(part, whole int64) string {
	if whole <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", 100*float64(part)/float64(whole))
}

// writeComparisons prints the modes side by side, then in words.
func (r *Report) writeComparisons(w io.Writer) error {
	if len(r.Comparisons) == 0 {
		return nil
	}
	rows := make([]devbulk.ComparisonRow, len(r.Comparisons))
	var words []string
	for i, c := range r.Comparisons {
		rows[i] = devbulk.ComparisonRow{Keys: []string{c.Phase}, Comparison: c.Comparison}
		words = append(words, fmt.Sprintf("%s %s: %s", c.B, c.Phase, c.Words("round")))
	}
	a, b := r.Comparisons[0].A, r.Comparisons[0].B
	err := devbulk.WriteComparisons(w, fmt.Sprintf("%s against %s, side by side (ratio = %s/%s: above 1, %s is faster)", b, a, b, a, a),
		[]string{"phase"}, "rounds", rows)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "\nIn words:\n  %s\n", strings.Join(words, "\n  "))
	return err
}

// profileRows is how many of a run's profile entries the table shows (the
// JSON document has all).
const profileRows = 20

// writeProfiles prints, for each profiled run, the cleanup worker's time by
// function, largest first.
func (r *Report) writeProfiles(w io.Writer) error {
	for _, run := range r.Runs {
		if run.Profile == nil {
			continue
		}
		fmt.Fprintf(w, "\nround %d %s: the cleanup worker's time (cleanup_net, %s for %d namespaces), by function:\n",
			max(1, run.Round), run.form(), result.FormatNS(run.WorkerNS), run.Namespaces)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "function\tcalls\ttotal\tper namespace\tshare\t")
		for _, e := range run.Profile[:min(profileRows, len(run.Profile))] {
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%.1f%%\t\n", e.Function, e.Calls, result.FormatNS(e.TotalNS), result.FormatNS(e.PerDeviceNS), 100*e.Share)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if more := len(run.Profile) - profileRows; more > 0 {
			fmt.Fprintf(w, "... and %d more functions (--json has them all)\n", more)
		}
	}
	return nil
}

// writeCurve prints a rate curve under its title (nothing without points).
func writeCurve(w io.Writer, title string, points []RatePoint) error {
	if len(points) == 0 {
		return nil
	}
	fmt.Fprintf(w, "\n%s:\n", title)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "namespaces\telapsed\tper s\t")
	for _, p := range points {
		fmt.Fprintf(tw, "%d\t%s\t%.0f\t\n", p.Created, result.FormatNS(p.TNS), p.NetnsPerSec)
	}
	return tw.Flush()
}
