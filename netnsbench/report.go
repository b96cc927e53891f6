package netnsbench

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/devbulk/devbulk/batch"
)

// WriteTable prints the report for people.
func (r *Report) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "devbulk %s  kernel %s  %d CPUs  netns %s\n\n", r.Version, r.Kernel, r.CPUs, r.Scenario)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "mode\tworkers\tper worker\tpayload\tcreate+release\tnetns/s\tuser\tsys\tCPU %\tdrain\tpeak backlog\t")
	for _, run := range r.Runs {
		cpu := 0.0
		if run.CreateNS > 0 {
			cpu = 100 * float64(run.UserNS+run.SysNS) / float64(run.CreateNS)
		}
		drain := "unknown"
		if run.DrainMethod != "" {
			drain = batch.FormatNS(run.DrainNS)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%.0f\t%s\t%s\t%.0f\t%s\t%d\t\n", run.Mode, run.Workers, run.PerWorker,
			run.Payload, batch.FormatNS(run.CreateNS), run.NetnsPerSec, batch.FormatNS(run.UserNS),
			batch.FormatNS(run.SysNS), cpu, drain, run.PeakBacklog)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\ndrain = from the last release until %s\n", DrainMethod)
	return err
}

// WriteSeries writes every run's samples as CSV.
func (r *Report) WriteSeries(w io.Writer) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"mode", "t_ns", "created", "released", "objects", "backlog"})
	for _, run := range r.Runs {
		for _, s := range run.Series {
			_ = cw.Write([]string{run.Mode, strconv.FormatInt(s.TNS, 10), strconv.FormatInt(s.Created, 10),
				strconv.FormatInt(s.Released, 10), strconv.Itoa(s.Objects), strconv.Itoa(s.Backlog)})
		}
	}
	cw.Flush()
	return cw.Error()
}
