package check

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/devbulk/devbulk"
	"github.com/devbulk/devbulk/internal/result"

	"github.com/devbulk/devbulk/vm"
)

// MaxKernels bounds the kernel configurations of one matrix.
const MaxKernels = 8

// Matrix is one suite run on several kernel configurations, and every
// configuration compared with the first.
type Matrix struct {
	Threshold float64 `json:"threshold_pct"`
	// Rounds is how many times each configuration was booted: round by
	// round, the configurations in order, then in reverse, and so on.
	Rounds int `json:"rounds"`
	// ReadBack marks a matrix of runs made elsewhere and read back
	// (MatrixOf): fleet jobs, saved checks; Rounds is 0.
	ReadBack bool     `json:"read_back,omitempty"`
	Columns  []Column `json:"kernels"`
}

// Column is one kernel configuration of a matrix.
type Column struct {
	// Label names the configuration: the kernel as it was asked for and
	// what its command line got ("debian:6.1 rcu_nocbs=all"); Package is
	// the Debian package the kernel came from.
	Label   string `json:"label"`
	Package string `json:"package,omitempty"`
	// Skip says why the configuration has no results: its kernel did not
	// boot, or could run none of the scenarios.
	Skip    string   `json:"skip,omitempty"`
	Results *Results `json:"results,omitempty"`
	// Scenarios compare this configuration with the first (the first's
	// hold its own summaries); Against is the same as a Report.
	Scenarios []ScenarioComparison `json:"scenarios,omitempty"`
	Against   *Report              `json:"-"`
}

// MatrixOptions tune RunMatrix.
type MatrixOptions struct {
	ThresholdPct float64
	// Rounds boots every configuration this many times (default 1), the
	// order alternating round by round (A B C, then C B A, ...), each boot
	// running every scenario ceil(repeat/Rounds) times: a drift of the
	// machine, or whatever runs first being faster, then falls on every
	// configuration alike, as in a side-by-side bench.
	Rounds int
}

// RunMatrix runs the whole suite in the VM on each kernel (2 to
// MaxKernels), round by round, and compares each with the first. A kernel
// that does not boot, or lacks what a scenario needs, is skipped with the
// reason in its column, and the others still run. When ctx ends it stops
// and returns what finished with ctx's error.
func RunMatrix(ctx context.Context, s *Suite, kernels []*vm.Kernel, mo MatrixOptions, o RunOptions) (*Matrix, error) {
	if len(kernels) < 2 || len(kernels) > MaxKernels {
		return nil, fmt.Errorf("a matrix compares 2 to %d kernel configurations", MaxKernels)
	}
	rounds := max(1, mo.Rounds)
	m := &Matrix{Threshold: mo.ThresholdPct, Rounds: rounds}
	per := &Suite{Name: s.Name}
	for _, sc := range s.Scenarios {
		sc.Repeat = (sc.Repeat + rounds - 1) / rounds
		per.Scenarios = append(per.Scenarios, sc)
	}
	results := make([]*Results, len(kernels))
	o.AllInVM, o.SkipUnbootable = true, true
	var err error
	for round := 0; round < rounds && err == nil; round++ {
		for j := range kernels {
			i := j
			if round%2 == 1 {
				i = len(kernels) - 1 - j
			}
			o.VM = kernels[i]
			if o.Progress != nil {
				o.Progress(fmt.Sprintf("round %d/%d: %s", round+1, rounds, kernels[i].Label()))
			}
			var r *Results
			if r, err = Run(ctx, per, o); err != nil {
				break
			}
			results[i] = results[i].merge(r)
		}
	}
	var ran []*Results
	for i, k := range kernels {
		if results[i] == nil {
			continue // interrupted before it ran
		}
		results[i].Meta.Label, results[i].Meta.KernelPackage = k.Label(), k.Package
		ran = append(ran, results[i])
	}
	m.addColumns(ran)
	return m, err
}

// MatrixOf compares results made elsewhere (fleet jobs, saved checks), one
// column each, with the first: each column is named by its results' label
// (the kernel configuration a job booted), else its kernel release.
func MatrixOf(thresholdPct float64, results ...*Results) (*Matrix, error) {
	if len(results) < 2 || len(results) > MaxKernels {
		return nil, fmt.Errorf("a matrix compares 2 to %d kernel configurations, got %d", MaxKernels, len(results))
	}
	m := &Matrix{Threshold: thresholdPct, ReadBack: true}
	m.addColumns(results)
	return m, nil
}

// addColumns adds a column per results and compares them with the first.
func (m *Matrix) addColumns(results []*Results) {
	for _, r := range results {
		col := Column{Label: r.Meta.Label, Package: r.Meta.KernelPackage, Results: r}
		if col.Label == "" {
			col.Label = r.Meta.Kernel
		}
		if why := allSkipped(r); why != "" {
			col.Skip, col.Results = why, nil
		}
		m.Columns = append(m.Columns, col)
	}
	m.compare()
}

// merge adds the scenarios of another boot's results: their lines and
// the kernel's complaints, and their skip or error where it had one. The first boot that ran something
// gives the meta.
func (r *Results) merge(more *Results) *Results {
	if r == nil {
		return more
	}
	if allSkipped(r) != "" && allSkipped(more) == "" {
		r.Meta = more.Meta
	}
	for _, sc := range more.Scenarios {
		mine := r.scenario(sc.Name)
		if mine == nil {
			r.Scenarios = append(r.Scenarios, sc)
			continue
		}
		// A scenario one boot ran and another skipped (a boot that did
		// not come up: vm.ErrNoBoot) counts as run, with that boot's
		// repetitions missing: say so, or its samples are silently short.
		lost := ""
		switch ranBefore, ranNow := len(mine.Lines) > 0, len(sc.Lines) > 0; {
		case ranNow && !ranBefore && mine.Skip != "":
			lost = mine.Skip
		case ranBefore && !ranNow && sc.Skip != "":
			lost = sc.Skip
		}
		mine.Lines = append(mine.Lines, sc.Lines...)
		switch {
		case len(mine.Lines) > 0:
			mine.Skip = "" // it ran in some boot
		case sc.Skip != "":
			mine.Skip = sc.Skip
		}
		if lost != "" && mine.Error == "" {
			mine.Error = "a boot's repetitions are missing, it was skipped: " + lost
		}
		if sc.Error != "" && mine.Error == "" {
			mine.Error = sc.Error
		}
		mine.Findings = append(mine.Findings, sc.Findings...)
	}
	return r
}

// allSkipped is the reason every scenario of r was skipped for, "" when
// one was not.
func allSkipped(r *Results) string {
	why := ""
	for _, sc := range r.Scenarios {
		if sc.Skip == "" {
			return ""
		}
		why = sc.Skip
	}
	return why
}

// ReadMatrix reads a matrix document (check with several --vm-kernel,
// --format json); the error says when it is not one.
func ReadMatrix(r io.Reader) (*Matrix, error) {
	var m Matrix
	if err := json.NewDecoder(r).Decode(&m); err != nil {
		return nil, err
	}
	if len(m.Columns) == 0 {
		return nil, errors.New("not a devbulk kernel matrix document (no \"kernels\")")
	}
	return &m, nil
}

// UnmarshalJSON reads a matrix document (check --format json with several
// kernels) and compares its columns again.
func (m *Matrix) UnmarshalJSON(b []byte) error {
	type plain Matrix
	if err := json.Unmarshal(b, (*plain)(m)); err != nil {
		return err
	}
	m.compare()
	return nil
}

// compare compares every column with the first that has results.
func (m *Matrix) compare() {
	var first *Results
	for i := range m.Columns {
		c := &m.Columns[i]
		if c.Results == nil {
			continue
		}
		c.Against = Compare(first, c.Results, m.Threshold)
		c.Scenarios = c.Against.Scenarios
		if first == nil {
			first = c.Results
		}
	}
}

// Failed reports whether a configuration failed a scenario, or regressed
// against the first.
func (m *Matrix) Failed() bool {
	for _, c := range m.Columns {
		if c.Against != nil && c.Against.Failed() {
			return true
		}
	}
	return false
}

// ExitCode is the kselftest exit status of the matrix: 1 when a
// configuration failed or regressed, 4 when none could run, else 0.
func (m *Matrix) ExitCode() int {
	ran := false
	for _, c := range m.Columns {
		ran = ran || (c.Against != nil && !c.Against.AllSkipped())
	}
	switch {
	case m.Failed():
		return ExitFail
	case !ran:
		return ExitSkip
	}
	return ExitPass
}

// Results are the results of the configurations that ran, in order.
func (m *Matrix) Results() []*Results {
	var out []*Results
	for _, c := range m.Columns {
		if c.Results != nil {
			out = append(out, c.Results)
		}
	}
	return out
}

// letter names column i in tables: A, B, C...
func letter(i int) string { return string(rune('A' + i)) }

// WriteTable prints the matrix for people: the configurations, then a row
// per benchmark with a column per configuration: the first's median and
// its interval, the others' medians and their change against the first
// with its 95% interval, and a mark where significant beyond the threshold.
func (m *Matrix) WriteTable(w io.Writer) error {
	how := devbulk.Plural(max(1, m.Rounds), "boot") + " each, the order alternating"
	if m.ReadBack {
		how = "runs made elsewhere (fleet jobs, saved checks), read back"
	}
	fmt.Fprintf(w, "devbulk check: %d kernel configurations, each against A; %s; threshold %g%%\n", len(m.Columns), how, m.Threshold)
	for i, c := range m.Columns {
		switch {
		case c.Skip != "":
			fmt.Fprintf(w, "  %s  %s  SKIP: %s\n", letter(i), c.Label, firstLine(c.Skip))
		default:
			fmt.Fprintf(w, "  %s  %s  %s  %s", letter(i), c.Label, c.Results.Meta.Machine(), c.Results.Meta.CPUModel)
			if c.Package != "" {
				fmt.Fprintf(w, "  (%s)", c.Package)
			}
			fmt.Fprintln(w)
		}
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "scenario\tbenchmark")
	for i := range m.Columns {
		fmt.Fprintf(tw, "\t%s", letter(i))
	}
	fmt.Fprintln(tw)
	for _, row := range m.rows() {
		fmt.Fprintf(tw, "%s\t%s", row.scenario, row.benchmark)
		for i, c := range m.Columns {
			fmt.Fprintf(tw, "\t%s", m.cell(i, c, row))
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\nper device (or namespace; Drain: per run). A: median ±95%% interval (n). The others: median, change against A "+
		"[its 95%% interval], ~ no significant difference (Mann-Whitney U, p ≥ 0.05), ▲ slower / ▼ faster significantly and by more "+
		"than the threshold.\n")
	return err
}

// row is one benchmark of a scenario, or a scenario with no benchmark to
// show (skipped or failed everywhere).
type row struct{ scenario, benchmark string }

// rows are the scenarios and benchmarks of every column, in first-seen
// order.
func (m *Matrix) rows() []row {
	var out []row
	seen := map[row]bool{}
	add := func(r row) {
		if !seen[r] {
			seen[r] = true
			out = append(out, r)
		}
	}
	benchmarks := map[string]bool{} // scenarios with a benchmark in some column
	for _, c := range m.Columns {
		for _, s := range c.Scenarios {
			for _, cmp := range s.Comparisons {
				benchmarks[s.Name] = true
				add(row{s.Name, cmp.Benchmark})
			}
		}
	}
	for _, c := range m.Columns {
		for _, s := range c.Scenarios {
			if !benchmarks[s.Name] {
				add(row{s.Name, "-"})
			}
		}
	}
	return out
}

func (m *Matrix) cell(i int, c Column, r row) string {
	if c.Skip != "" {
		return "skipped"
	}
	for _, s := range c.Scenarios {
		if s.Name != r.scenario {
			continue
		}
		switch {
		case s.Skip != "":
			return "SKIP: " + firstLine(s.Skip)
		case s.Error != "" && r.benchmark == "-":
			return "FAILED: " + firstLine(s.Error)
		}
		for _, cmp := range s.Comparisons {
			if cmp.Benchmark == r.benchmark {
				return compareCell(cmp)
			}
		}
	}
	return "-"
}

// compareCell is one benchmark of a column: the first column's summary,
// or a median with its change against the first.
func compareCell(cmp Comparison) string {
	switch {
	case cmp.Cur == nil:
		return cmp.Verdict // missing
	case cmp.Base == nil:
		return cell(cmp.Cur)
	}
	format := "%s %+.0f%%"
	if math.Abs(cmp.DeltaPct) < 10 {
		format = "%s %+.1f%%"
	}
	s := fmt.Sprintf(format, result.FormatNS(int64(cmp.Cur.Median)), cmp.DeltaPct)
	if len(cmp.DeltaCI95) == 2 {
		s += fmt.Sprintf(" [%+.0f..%+.0f]", cmp.DeltaCI95[0], cmp.DeltaCI95[1])
	}
	switch {
	case cmp.Verdict == Regression:
		s += " ▲"
	case cmp.Verdict == Improvement:
		s += " ▼"
	case cmp.P >= cmp.Alpha:
		s += " ~"
	}
	return s
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}

// WriteKTAP prints the matrix as KTAP version 1: one test per
// configuration, each with a subtest per scenario (the first's on their
// own, the others against the first).
func (m *Matrix) WriteKTAP(w io.Writer) error {
	fmt.Fprintln(w, "KTAP version 1")
	suite := ""
	if rs := m.Results(); len(rs) > 0 {
		suite = rs[0].Meta.Suite
	}
	fmt.Fprintf(w, "# devbulk suite=%s kernels=%d rounds=%d threshold_pct=%g\n", suite, len(m.Columns), max(1, m.Rounds), m.Threshold)
	fmt.Fprintf(w, "1..%d\n", len(m.Columns))
	for i, c := range m.Columns {
		name := letter(i) + " " + c.Label
		if c.Skip != "" {
			fmt.Fprintf(w, "ok %d %s # SKIP %s\n", i+1, name, oneLine(firstLine(c.Skip)))
			continue
		}
		meta := c.Results.Meta
		fmt.Fprintln(w, "  KTAP version 1")
		fmt.Fprintf(w, "  # Subtest: %s\n", name)
		fmt.Fprintf(w, "  # kernel=%s package=%s cpus=%d mem_kib=%d accel=%s cmdline=%q\n", meta.Kernel, orNone(c.Package),
			meta.CPUs, meta.MemKiB, orNone(meta.Accel), meta.Cmdline)
		if err := c.Against.writeKTAPTests(w, "  "); err != nil {
			return err
		}
		switch {
		case c.Against.Failed():
			fmt.Fprintf(w, "not ok %d %s\n", i+1, name)
		case c.Against.AllSkipped():
			fmt.Fprintf(w, "ok %d %s # SKIP no scenario could run\n", i+1, name)
		default:
			fmt.Fprintf(w, "ok %d %s\n", i+1, name)
		}
	}
	return nil
}
