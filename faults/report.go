package faults

import (
	"cmp"
	"fmt"
	"io"
	"strings"

	"github.com/devbulk/devbulk/kernlog"
)

// Failed counts the steps that broke a guarantee or made the kernel complain.
func (r *Report) Failed() int {
	n := 0
	for i := range r.Steps {
		if r.Steps[i].Failed() {
			n++
		}
	}
	return n
}

// WriteTable says, path by path, how far the sweep went and what the
// faults gave (the request's errors, counted), then every failed step in
// full.
func (r *Report) WriteTable(w io.Writer) {
	fmt.Fprintf(w, "devbulk %s  %s\n", r.Version, r.Machine())
	fmt.Fprintf(w, "fail-nth sweep: %d %s a run, every fault point of each path's request until it ran whole (at most %d)\n\n", r.Count, r.Kind, r.MaxN)
	for _, p := range Paths {
		var steps []Step
		for _, s := range r.Steps {
			if s.Path == p {
				steps = append(steps, s)
			}
		}
		if len(steps) == 0 {
			continue
		}
		errs := map[string]int{}
		first := map[string]Step{}
		var order []string
		failed := 0
		for _, s := range steps {
			if s.Injected {
				key := cmp.Or(errno(s.Error), "no error: the kernel took the fault in its stride")
				if errs[key] == 0 {
					order, first[key] = append(order, key), s
				}
				errs[key]++
			}
			if s.Failed() {
				failed++
			}
		}
		last := steps[len(steps)-1]
		end := fmt.Sprintf("ran whole at N=%d", last.N)
		if last.Injected {
			end = fmt.Sprintf("stopped at N=%d: more fault points than --max-n", last.N)
		}
		fmt.Fprintf(w, "%s: %d faults injected, %s; %d steps failed\n", p, len(steps)-boolInt(!last.Injected), end, failed)
		for _, k := range order {
			where := ""
			if f := first[k]; f.Site != "" {
				where = fmt.Sprintf(" (first N=%d, in %s)", f.N, f.Site)
			}
			fmt.Fprintf(w, "  %5d× %s%s\n", errs[k], k, where)
		}
	}
	for _, s := range r.Steps {
		if !s.Failed() {
			continue
		}
		fmt.Fprintf(w, "\n%s N=%d (error %q):\n", s.Path, s.N, s.Error)
		if s.Devbulk != "" {
			fmt.Fprintf(w, "  devbulk: %s\n", s.Devbulk)
		}
		if s.Kernel != "" {
			fmt.Fprintf(w, "  kernel: %s\n", s.Kernel)
		}
		for _, f := range s.Findings {
			f.Write(w, "  ")
		}
	}
	if r.Unread != "" {
		fmt.Fprintln(w)
		(&kernlog.Summary{Unread: r.Unread}).Write(w)
	}
}

// errno is the last part of a request's error, the kernel's own words
// ("cannot allocate memory"), so that faults count by what they gave.
func errno(err string) string {
	if i := strings.LastIndex(err, ": "); i >= 0 {
		return err[i+2:]
	}
	return err
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
