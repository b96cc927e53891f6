package lava

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"

	"github.com/devbulk/devbulk/check"
	"github.com/devbulk/devbulk/internal/child"
)

// Case is one LAVA test case.
type Case struct {
	Name   string
	Result string // pass, fail or skip
	// Measurement and Units are the case's figure, when it has one.
	Measurement *float64
	Units       string
}

// LAVA's results.
const (
	Pass = "pass"
	Fail = "fail"
	Skip = "skip"
)

// Definition is the name of the job's test definition: LAVA reports its
// cases as the suite "N_devbulk" (N its position in the job).
const Definition = "devbulk"

// CheckCase is the case of the check as a whole. Its "." keeps it apart
// from scenario names ([A-Za-z0-9_-]) and from samples (SCENARIO.N).
const CheckCase = "devbulk.check"

// sampleScenario is the scenario of a sample's case name: a scenario's
// name, a dot, the sample's number from 1; ok is false for other names.
func sampleScenario(name string) (scenario string, ok bool) {
	scenario, n, ok := strings.Cut(name, ".")
	return scenario, ok && check.ScenarioName(scenario) && n != "" && strings.Trim(n, "0123456789") == ""
}

// Cases are the LAVA test cases of a check: one per scenario (pass, fail
// or skip as the check judged it; the median of its headline benchmark as
// the measurement), then one per value of that benchmark, SCENARIO.1,
// SCENARIO.2, ... (a LAVA server's export keeps only cases: with these, a
// matrix built from exports still has each scenario's samples), and last
// CheckCase for the whole check.
func Cases(r *check.Report) []Case {
	var out []Case
	for i := range r.Scenarios {
		s := &r.Scenarios[i]
		c := Case{Name: s.Name, Result: Pass}
		switch {
		case s.Skip != "":
			c.Result = Skip
		case s.Failed():
			c.Result = Fail
		}
		h := s.Headline()
		if h == nil {
			out = append(out, c)
			continue
		}
		c.Measurement, c.Units = &h.Cur.Median, h.Unit
		out = append(out, c)
		for j, v := range h.Cur.Values {
			out = append(out, Case{Name: fmt.Sprintf("%s.%d", s.Name, j+1), Result: Pass, Measurement: &v, Units: h.Unit})
		}
	}
	whole := Case{Name: CheckCase, Result: Pass}
	switch r.ExitCode() {
	case check.ExitFail:
		whole.Result = Fail
	case check.ExitSkip:
		whole.Result = Skip
	}
	return append(out, whole)
}

// WriteCases reports cases to LAVA: by its lava-test-case command when one
// is on PATH (in a job's test shell), each call's output going to w;
// elsewhere as lines "NAME RESULT [MEASUREMENT UNITS]" on w, the form
// Linaro's test definitions turn into cases.
func WriteCases(ctx context.Context, w io.Writer, cases []Case) error {
	ltc, lookErr := exec.LookPath("lava-test-case")
	for _, c := range cases {
		args := []string{c.Name, "--result", c.Result}
		line := c.Name + " " + c.Result
		if c.Measurement != nil {
			m := formatMeasurement(*c.Measurement)
			args = append(args, "--measurement", m, "--units", c.Units)
			line += " " + m + " " + c.Units
		}
		if lookErr != nil { // not in a LAVA test shell
			if _, err := fmt.Fprintln(w, line); err != nil {
				return err
			}
			continue
		}
		cmd := child.Command(ctx, ltc, args...)
		cmd.Stdout, cmd.Stderr = w, w
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("lava-test-case %s: %w", c.Name, err)
		}
	}
	return nil
}

// formatMeasurement writes a measurement with at most two decimals (a
// median of two values in ns has one; sums of floats have noise digits).
func formatMeasurement(v float64) string {
	s := strconv.FormatFloat(v, 'f', 2, 64)
	return strings.TrimSuffix(strings.TrimRight(s, "0"), ".")
}
