package lava

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/devbulk/devbulk"
	"github.com/devbulk/devbulk/check"
)

// Run is what one LAVA job reported of devbulk's check.
type Run struct {
	// Cases are the devbulk test definition's cases, in the order reported.
	Cases []Case
	// Job is LAVA's result of the job itself (pass, fail, incomplete),
	// where the output has it (a lava-run log does).
	Job string
	// Results is the results document the guest printed; nil in a LAVA
	// server's export, which keeps only cases.
	Results *check.Results
	// Damaged says why a log's results document could not be read (a
	// console line cut short or mixed with kernel messages): Document then
	// reads the cases, as for an export.
	Damaged string
	// Finished is LAVA's result of the devbulk test definition itself:
	// fail when its run did not finish (devbulk could not run the check,
	// or crashed); "" where the output does not say.
	Finished string
}

// UnknownKernel is the kernel of a document made from a server's export,
// which does not say.
const UnknownKernel = "unknown (a LAVA results export)"

// ErrNotLAVA marks input that holds no devbulk cases: not LAVA's output,
// or a job that did not run devbulk's test definition.
var ErrNotLAVA = errors.New("no devbulk test cases")

// definitionSuite is the name LAVA gives the cases of devbulk's test
// definition: its position in the job, "_", Definition.
var definitionSuite = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9]+_` + Definition + `$`) })

// Read reads LAVA's output for one job: the log lava-run writes (one YAML
// flow mapping per line, `- {"dt": ..., "lvl": ..., "msg": ...}`: cases are
// the "results" lines, the guest's console the "target" lines), or a LAVA
// server's results export (`lavacli results JOB --yaml`: a YAML list of
// cases with name, suite, result, measurement and unit).
func Read(rd io.Reader) (*Run, error) {
	b, err := io.ReadAll(rd)
	if err != nil {
		return nil, err
	}
	var run *Run
	if IsLog(b) {
		run, err = readLog(b)
	} else {
		run, err = readExport(b)
	}
	if err != nil {
		return nil, err
	}
	if len(run.Cases) == 0 && run.Results == nil && run.Damaged == "" {
		return nil, fmt.Errorf("%w (test definition %q): not the output of a job devbulk lava job wrote", ErrNotLAVA, Definition)
	}
	return run, nil
}

// IsLog tells a lava-run log by its first lines: one of them a flow
// mapping with "lvl" (a list item in the logs a server keeps; a warning of
// Python's may come first).
func IsLog(b []byte) bool {
	for i, line := range bytes.SplitN(b, []byte("\n"), 21) {
		line = bytes.TrimPrefix(bytes.TrimSpace(line), []byte("- "))
		if i < 20 && bytes.HasPrefix(line, []byte("{")) && bytes.Contains(line, []byte(`"lvl"`)) {
			return true
		}
	}
	return false
}

// logLine is one event of a lava-run log.
type logLine struct {
	Lvl string    `yaml:"lvl"`
	Msg yaml.Node `yaml:"msg"`
}

func readLog(b []byte) (*Run, error) {
	run := &Run{}
	var results blob
	var cut error // the first results line that was not whole
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		text := strings.TrimPrefix(sc.Text(), "- ")
		if !strings.Contains(text, `"lvl": "results"`) && !strings.Contains(text, blobPrefix) {
			continue // the other events say nothing of devbulk's: not parsed
		}
		var l logLine
		if err := yaml.Unmarshal([]byte(text), &l); err != nil {
			continue // a line cut short (a job killed mid-write)
		}
		switch l.Lvl {
		case "target":
			var s string
			if l.Msg.Decode(&s) == nil {
				if err := results.add(s); err != nil && cut == nil {
					cut = err
				}
			}
		case "results":
			var m map[string]any
			if l.Msg.Decode(&m) != nil {
				continue
			}
			def, _ := m["definition"].(string)
			name, _ := m["case"].(string)
			switch {
			case def == "lava" && name == "job":
				run.Job, _ = m["result"].(string)
			case def == "lava" && definitionSuite().MatchString(name):
				run.Finished, _ = m["result"].(string)
			}
			if definitionSuite().MatchString(def) {
				c, err := caseOf(m, "case", "units")
				if err != nil {
					return nil, err
				}
				run.Cases = append(run.Cases, c)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	var err error
	switch run.Results, err = results.results(); {
	case err != nil && cut != nil:
		run.Damaged = cut.Error()
	case err != nil:
		run.Damaged = err.Error()
	}
	return run, nil
}

func readExport(b []byte) (*Run, error) {
	var list []map[string]any
	if err := yaml.Unmarshal(b, &list); err != nil {
		return nil, fmt.Errorf("%w: neither a lava-run log nor a LAVA results export (%s)", ErrNotLAVA, yamlWhy(err, "a list of test cases"))
	}
	run := &Run{}
	for _, m := range list {
		suite, _ := m["suite"].(string)
		if suite == "lava" && m["name"] == "job" {
			run.Job, _ = m["result"].(string)
		}
		if !definitionSuite().MatchString(suite) {
			continue
		}
		c, err := caseOf(m, "name", "unit")
		if err != nil {
			return nil, err
		}
		run.Cases = append(run.Cases, c)
	}
	return run, nil
}

// caseOf reads a case from a result map: its name under nameKey, its
// result, and its measurement (a number or a string: lava-run tags it, a
// server's export quotes it) with its units under unitKey.
func caseOf(m map[string]any, nameKey, unitKey string) (Case, error) {
	c := Case{}
	c.Name, _ = m[nameKey].(string)
	c.Result, _ = m["result"].(string)
	if c.Name == "" || c.Result == "" {
		return c, fmt.Errorf("a devbulk case without a name or result: %v", m)
	}
	if v, ok := m["measurement"]; ok && v != nil {
		f, err := strconv.ParseFloat(strings.TrimSpace(fmt.Sprint(v)), 64)
		if err != nil {
			return c, fmt.Errorf("case %s: measurement %q is not a number", c.Name, fmt.Sprint(v))
		}
		c.Measurement = &f
		c.Units, _ = m[unitKey].(string)
	}
	return c, nil
}

// Document is the run as a check's results document: the one the guest
// printed, or, from a server's export, one made from the cases: each
// scenario's headline samples (its SCENARIO.N cases) as the benchmark
// "Headline/scenario=NAME"; a skipped case is a skip, a failed one an
// error (an export does not say whether it regressed against the job's
// baseline or failed outright). Compare export with export: a document the
// guest printed has every benchmark.
func (r *Run) Document() (*check.Results, error) {
	if r.Results != nil {
		return r.Results, nil
	}
	doc := &check.Results{Meta: check.Meta{Header: devbulk.Header{Tool: "devbulk", Kernel: UnknownKernel}, Suite: "fleet"}}
	index := map[string]int{}
	for _, c := range r.Cases {
		if c.Name == CheckCase {
			continue
		}
		name, isSample := c.Name, false
		if scenario, ok := sampleScenario(c.Name); ok {
			name, isSample = scenario, true
		}
		i, ok := index[name]
		if !ok {
			i = len(doc.Scenarios)
			index[name] = i
			doc.Scenarios = append(doc.Scenarios, check.Scenario{Name: name})
		}
		sc := &doc.Scenarios[i]
		switch {
		case isSample && c.Measurement != nil:
			sc.Lines = append(sc.Lines, check.Line{Name: "Headline/scenario=" + name, Iters: 1,
				Values: []check.Value{{Value: *c.Measurement, Unit: c.Units}}})
		case c.Result == Skip:
			sc.Skip = "skipped in the fleet job"
		case c.Result == Fail:
			sc.Error = "failed in the fleet job (a regression against its baseline, or an error)"
		}
	}
	if len(doc.Scenarios) == 0 {
		return nil, fmt.Errorf("%w: only the check's own case", ErrNotLAVA)
	}
	return doc, nil
}

// yamlWhy says in one line why a file is not the YAML wanted: not of
// want's shape (the library's text names Go types), or not YAML at all.
func yamlWhy(err error, want string) string {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		return "its YAML is not " + want
	}
	return strings.Join(strings.Fields(err.Error()), " ")
}

// ReadRun reads one kernel's check, whatever form it came in: a results
// document (check --save), else a LAVA job's log or a server's results
// export (Read); damaged says why a job's log did not give its whole
// results document.
func ReadRun(b []byte) (r *check.Results, damaged string, err error) {
	if r, err = check.ReadResults(bytes.NewReader(b)); err == nil {
		return r, "", nil
	}
	run, lerr := Read(bytes.NewReader(b))
	switch {
	case lerr == nil:
		r, err = run.Document()
		return r, run.Damaged, err
	case errors.Is(lerr, ErrNotLAVA) && !IsLog(b) && bytes.HasPrefix(bytes.TrimSpace(b), []byte("{")):
		return nil, "", err // JSON, but not devbulk's
	}
	return nil, "", lerr
}
