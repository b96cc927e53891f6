package check

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/devbulk/devbulk/batch"
	"github.com/devbulk/devbulk/bench"
	"github.com/devbulk/devbulk/bystander"
	"github.com/devbulk/devbulk/devices"
	"github.com/devbulk/devbulk/netnsbench"
)

// Suite is a list of scenarios to measure, read from JSON (see docs/check.md):
//
//	{"name": "mine", "scenarios": [
//	  {"name": "ifb-group", "repeat": 5, "bench": {"kind": "ifb", "count": 2000, "delete": ["group", "netns"]}},
//	  {"name": "dummy", "vm": true, "bench": {"kind": "dummy", "count": 1000, "delete": ["group", "module"]}},
//	  {"name": "churn", "netns": {"scenario": "churn", "workers": 2, "per_worker": 200}}]}
type Suite struct {
	Name      string         `json:"name"`
	Scenarios []ScenarioSpec `json:"scenarios"`
}

// ScenarioSpec is one scenario: a bench (create→delete cycles) or a netns
// scenario, repeated Repeat times (default 6: the fewest that give a 95%
// confidence interval of the median; from 4 a side the Mann-Whitney U test
// can call a difference significant at α=0.05).
type ScenarioSpec struct {
	// Name is the scenario's name in reports and KTAP: [A-Za-z0-9_-], 1..64.
	Name string `json:"name"`
	// VM runs the scenario in a VM on Debian's cloud kernel (devbulk vm),
	// for kinds the host lacks.
	VM     bool       `json:"vm,omitempty"`
	Repeat int        `json:"repeat,omitempty"`
	Bench  *BenchSpec `json:"bench,omitempty"`
	Netns  *NetnsSpec `json:"netns,omitempty"`
}

// BenchSpec is `devbulk bench` with one count.
type BenchSpec struct {
	Kind   string   `json:"kind"`
	Count  int      `json:"count"`
	Create string   `json:"create,omitempty"` // default pipelined
	Delete []string `json:"delete"`
	// Move moves the links into a second namespace first, by each of
	// these strategies (bench --move), and deletes them there.
	Move []string `json:"move,omitempty"`
	Up   bool     `json:"up,omitempty"`
	// Profile breaks each delete phase down by kernel function (bench
	// --profile): each component becomes a benchmark of its own.
	Profile bool `json:"profile,omitempty"`
	// Bystander runs a prober beside the cycles (bench --bystander
	// OP[@RATE]): each phase's p99 becomes a benchmark a threshold gates.
	Bystander string `json:"bystander,omitempty"`
}

// NetnsSpec is one of the `devbulk netns` scenarios.
type NetnsSpec struct {
	Scenario  string `json:"scenario"` // churn, sequential or create
	Workers   int    `json:"workers,omitempty"`
	PerWorker int    `json:"per_worker,omitempty"`
	Payload   string `json:"payload,omitempty"`   // churn (default lo-up), create (default none): see netnsbench.ParsePayload
	Count     int    `json:"count,omitempty"`     // sequential, create
	Veth      bool   `json:"veth,omitempty"`      // create: payload veth:1
	ExecStep  string `json:"exec_step,omitempty"` // create: see netnsbench.KeepOptions
	Profile   bool   `json:"profile,omitempty"`   // churn, create, sequential: the cleanup worker by handler
}

// defaultRepeat is a scenario's repeat count when the suite gives none.
const defaultRepeat = 6

// UnmarshalJSON reads a scenario whose repeat, when not given, is
// defaultRepeat: a "repeat": 0 the suite does give is refused, not replaced.
func (sc *ScenarioSpec) UnmarshalJSON(b []byte) error {
	type plain ScenarioSpec // without this method
	p := plain{Repeat: defaultRepeat}
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(&p); err != nil {
		return err
	}
	*sc = ScenarioSpec(p)
	return nil
}

var (
	//go:embed quick-suite.json
	quickSuite []byte
	//go:embed full-suite.json
	fullSuite []byte
	//go:embed hunt-suite.json
	huntSuite []byte
)

// namedSuites are the suites --suite takes by name.
var namedSuites = map[string][]byte{"quick": quickSuite, "full": fullSuite, "hunt": huntSuite}

// NamedSuite is the suite of that name (quick, full, hunt): the hunt walks
// every teardown path of every kind once, sized for a debug kernel under
// TCG (+fragment:debug), for the kernel's complaints (findings), not for
// timing. ok is false for a name devbulk does not have.
func NamedSuite(name string) (doc []byte, ok bool) {
	b, ok := namedSuites[name]
	return bytes.Clone(b), ok
}

// SuiteNames lists the names NamedSuite takes.
func SuiteNames() []string { return slices.Sorted(maps.Keys(namedSuites)) }

// QuickSuite is the suite `devbulk check` runs by default: kinds every
// kernel devbulk supports has (ifb, veth) and the netns scenarios, on this
// kernel, chosen for verdicts that hold from run to run, in under a minute
// on the development machine.
func QuickSuite() []byte { return bytes.Clone(quickSuite) }

// FullSuite is devbulk's whole suite (check --vm, and what a fleet's guest
// runs): the focus kinds in the VM, every kind of the host's, and the
// netns scenarios.
func FullSuite() []byte { return bytes.Clone(fullSuite) }

// Own names devbulk's own suites, as their results' meta.suite does;
// "default" is the full suite's name in results of devbulk before the
// quick suite.
func Own(name string) (full, ok bool) {
	switch name {
	case "quick":
		return false, true
	case "full", "default":
		return true, true
	}
	return false, false
}

// ScenarioName reports whether s is a scenario's name: 1..64 of A-Z a-z
// 0-9 _ - (it is a KTAP test name). A function, not a regular expression:
// {1,64} compiled at every start-up cost more than any other package's
// initialisation of devbulk's own.
func ScenarioName(s string) bool {
	if len(s) < 1 || len(s) > 64 {
		return false
	}
	for _, c := range []byte(s) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// maxSuiteBytes bounds what ParseSuite reads: a suite of every scenario
// devbulk has is a few KiB.
const maxSuiteBytes = 1 << 20

// lineAt is the line of src at byte offset off, from 1.
func lineAt(src []byte, off int64) int {
	return bytes.Count(src[:min(max(off, 0), int64(len(src)))], []byte("\n")) + 1
}

// ParseSuite reads and checks a suite; errors name the scenario and the
// valid range.
func ParseSuite(r io.Reader) (*Suite, error) {
	src, err := io.ReadAll(io.LimitReader(r, maxSuiteBytes+1))
	if err != nil {
		return nil, err
	}
	if len(src) > maxSuiteBytes {
		return nil, fmt.Errorf("suite: larger than %d KiB: not a suite", maxSuiteBytes>>10)
	}
	dec := json.NewDecoder(bytes.NewReader(src))
	dec.DisallowUnknownFields()
	var s Suite
	if err := dec.Decode(&s); err != nil {
		var te *json.UnmarshalTypeError
		var se *json.SyntaxError
		switch {
		case errors.As(err, &te):
			return nil, fmt.Errorf("suite: line %d: %s: want %s, got a JSON %s", lineAt(src, te.Offset), te.Field, jsonType(te.Type.Kind()), te.Value)
		case errors.As(err, &se):
			return nil, fmt.Errorf("suite: line %d: %w", lineAt(src, se.Offset), err)
		case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
			return nil, fmt.Errorf("suite: line %d: the JSON ends before the suite does", lineAt(src, int64(len(src))))
		}
		return nil, fmt.Errorf("suite: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("suite: line %d: data after the suite's JSON object", lineAt(src, dec.InputOffset()))
	}
	if len(s.Scenarios) == 0 {
		return nil, errors.New("suite: no scenarios")
	}
	seen := map[string]bool{}
	for i := range s.Scenarios {
		sc := &s.Scenarios[i]
		if err := sc.check(); err != nil {
			return nil, fmt.Errorf("suite: scenario %d (%q): %w", i+1, sc.Name, err)
		}
		if seen[sc.Name] {
			return nil, fmt.Errorf("suite: scenario %d: name %q used twice", i+1, sc.Name)
		}
		seen[sc.Name] = true
	}
	return &s, nil
}

func (sc *ScenarioSpec) check() error {
	if !ScenarioName(sc.Name) {
		return errors.New("name must be 1..64 of A-Z a-z 0-9 _ - (it is a KTAP test name)")
	}
	if sc.Repeat < 1 || sc.Repeat > 100 {
		return fmt.Errorf("repeat %d out of range: 1..100", sc.Repeat)
	}
	switch {
	case (sc.Bench == nil) == (sc.Netns == nil):
		return errors.New("give exactly one of bench and netns")
	case sc.Bench != nil:
		_, err := sc.Bench.options()
		return err
	default:
		return sc.Netns.check()
	}
}

// options checks the bench and returns its options, without Lower (which
// needs probing).
func (b *BenchSpec) options() (bench.Options, error) {
	k, err := devices.Lookup(b.Kind)
	if err != nil {
		return bench.Options{}, err
	}
	if b.Count < 1 || b.Count > k.MaxCount {
		return bench.Options{}, fmt.Errorf("count %d out of range: %s takes 1..%d", b.Count, k.Name, k.MaxCount)
	}
	if err := k.Validate(devices.Options{Count: b.Count, Prefix: bench.Prefix, Up: b.Up}); err != nil {
		return bench.Options{}, err
	}
	o := bench.Options{Kind: k, Counts: []int{b.Count}, Repeat: 1, Up: b.Up, Profile: b.Profile}
	if b.Create == "" {
		b.Create = "pipelined"
	}
	if o.Create, err = batch.ParseCreate(b.Create); err != nil {
		return o, err
	}
	if len(b.Delete) == 0 {
		return o, errors.New("delete: give one or more strategies")
	}
	for _, s := range b.Delete {
		d, err := batch.ParseDelete(s)
		if err != nil {
			return o, err
		}
		if err := d.Applies(k, true); err != nil {
			return o, err
		}
		o.Deletes = append(o.Deletes, d)
	}
	for _, s := range b.Move {
		m, err := batch.ParseMove(s)
		if err != nil {
			return o, err
		}
		o.Moves = append(o.Moves, m)
	}
	if b.Bystander != "" {
		by, err := bystander.Parse(b.Bystander)
		o.Bystander = &by
		return o, err
	}
	return o, nil
}

func (n *NetnsSpec) check() error {
	_, err := n.prepared()
	return err
}

func (n *NetnsSpec) churn() (netnsbench.ChurnOptions, error) {
	if n.Workers < 1 || n.Workers > 1024 {
		return netnsbench.ChurnOptions{}, fmt.Errorf("workers %d out of range: 1..1024", n.Workers)
	}
	p, err := netnsbench.ParsePayload(n.Payload)
	return netnsbench.ChurnOptions{Workers: n.Workers, PerWorker: n.PerWorker, Payload: p, Profile: n.Profile}, err
}

func (n *NetnsSpec) create() (netnsbench.KeepOptions, error) {
	o := netnsbench.KeepOptions{Count: n.Count, ExecStep: n.ExecStep, Profile: n.Profile}
	spec := n.Payload
	if n.Veth {
		spec = netnsbench.WithVeth(spec)
	}
	var err error
	if spec != "" {
		o.Payload, err = netnsbench.ParsePayload(spec)
	}
	return o, err
}

// ProbePayloads checks the payloads of the scenarios that run on this
// kernel (netnsbench.Payload.Probe), so that one this kernel refuses stops
// the check before its first scenario.
func (s *Suite) ProbePayloads() error {
	for _, sc := range s.Scenarios {
		if sc.VM || sc.Netns == nil {
			continue
		}
		r, err := sc.Netns.prepared()
		if err == nil {
			err = r.payload.Probe()
		}
		if err != nil {
			return fmt.Errorf("scenario %q: %w", sc.Name, err)
		}
	}
	return nil
}

// NeedsVM reports whether a scenario of the suite runs in the VM.
func (s *Suite) NeedsVM() bool {
	for _, sc := range s.Scenarios {
		if sc.VM {
			return true
		}
	}
	return false
}

// jsonType names what a Go kind is in JSON, for people.
func jsonType(k reflect.Kind) string {
	switch k {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8,
		reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Struct, reflect.Map, reflect.Pointer:
		return "an object"
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "a string"
	}
	return k.String()
}

// Profile has the scenario break its phases down by kernel function too.
func (sc *ScenarioSpec) Profile() {
	if sc.Bench != nil {
		sc.Bench.Profile = true
	} else if sc.Netns != nil {
		sc.Netns.Profile = true
	}
}

// Scenario is the suite's scenario of that name; ok is false, with the
// names there are, when there is none.
func (s *Suite) Scenario(name string) (ScenarioSpec, []string, bool) {
	var names []string
	for _, sc := range s.Scenarios {
		if sc.Name == name {
			return sc, nil, true
		}
		names = append(names, sc.Name)
	}
	return ScenarioSpec{}, names, false
}

// Benchmarks are the prefixes of the benchmark names the scenario
// measures: a bench's every create and delete by name; a netns scenario's
// Netns<Scenario> (its Drain, Exec and profile lines start so too).
func (sc ScenarioSpec) Benchmarks() []string {
	if sc.Netns != nil {
		return []string{"Netns" + title(sc.Netns.Scenario)}
	}
	b := sc.Bench
	create := b.Create
	if create == "" {
		create = "pipelined"
	}
	out := []string{fmt.Sprintf("Create/kind=%s/strategy=%s/n=%d", b.Kind, create, b.Count)}
	for _, d := range b.Delete {
		out = append(out, fmt.Sprintf("Delete/kind=%s/strategy=%s/n=%d", b.Kind, d, b.Count))
	}
	return out
}

// Headline is the benchmark the scenario is judged by when none is named:
// a netns scenario's own (Netns<Scenario>), a bench's first delete.
func (sc ScenarioSpec) Headline() string {
	names := sc.Benchmarks()
	if sc.Netns != nil || len(names) == 1 {
		return names[0]
	}
	return names[1] // names[0] is the create
}

// Metric is the benchmark prefix a bisection decides by: metric itself,
// when the scenario measures a benchmark that starts with it (a netns
// scenario's own lines too: NetnsChurnDrain), or its Headline when metric
// is empty; an error names what it measures otherwise.
func (sc ScenarioSpec) Metric(metric string) (string, error) {
	names := sc.Benchmarks()
	switch {
	case metric == "":
		return sc.Headline(), nil
	case sc.Netns != nil && strings.HasPrefix(metric, names[0]):
		return metric, nil
	}
	for _, n := range names {
		if strings.HasPrefix(n, metric) {
			return metric, nil
		}
	}
	return "", fmt.Errorf("%q: scenario %s measures %s", metric, sc.Name, strings.Join(names, ", "))
}

// Command is the devbulk command line that measures the scenario by
// itself (a bisection's report gives it, to reproduce one kernel's
// figures); devbulk's own flags parse it (cmd/devbulk's
// TestScenarioCommandsParse).
func (sc ScenarioSpec) Command() []string {
	rep := strconv.Itoa(sc.Repeat)
	if n := sc.Netns; n != nil {
		k, _ := n.kind() // a parsed suite's scenarios are known kinds
		args := append([]string{"netns", n.Scenario}, k.size(n)...)
		if n.Payload != "" {
			args = append(args, "--payload", n.Payload)
		}
		if n.Veth {
			args = append(args, "--veth")
		}
		if n.ExecStep != "" {
			args = append(args, "--exec-step", n.ExecStep)
		}
		if n.Profile {
			args = append(args, "--profile")
		}
		if !k.rounds { // each run of the command is one
			return args
		}
		return append(args, "--repeat", rep)
	}
	b := sc.Bench
	args := []string{"bench", "--kind", b.Kind, "--count", strconv.Itoa(b.Count), "--delete", strings.Join(b.Delete, ","), "--repeat", rep}
	if b.Create != "" && b.Create != "pipelined" { // bench's default
		args = append(args, "--create", b.Create)
	}
	if len(b.Move) > 0 {
		args = append(args, "--move", strings.Join(b.Move, ","))
	}
	if b.Up {
		args = append(args, "--up")
	}
	if b.Profile {
		args = append(args, "--profile")
	}
	if b.Bystander != "" {
		args = append(args, "--bystander", b.Bystander)
	}
	return args
}

// ErrNotComparable marks a baseline a run of the suite could not be
// compared with: its every benchmark would be reported missing, which a
// gate would read as a regression.
var ErrNotComparable = errors.New("not comparable")

// Comparable says, before anything runs, whether what s measures can be
// compared with base: some of base's benchmarks are among those s
// measures, and every scenario of base is one s runs (a scenario s lacks
// would be reported missing).
func (s *Suite) Comparable(base *Results) error {
	var common int
	var lacks []string
	for _, b := range base.Scenarios {
		if len(b.Lines) == 0 {
			continue // skipped or failed when the baseline was saved
		}
		sc, _, ok := s.Scenario(b.Name)
		if !ok {
			lacks = append(lacks, b.Name)
			continue
		}
		for _, l := range b.Lines {
			if slices.ContainsFunc(sc.Benchmarks(), func(p string) bool { return strings.HasPrefix(l.Name, p) }) {
				common++
				break
			}
		}
	}
	switch {
	case common == 0:
		return fmt.Errorf("%w: the baseline (suite %q) holds no benchmark the suite %q measures", ErrNotComparable, base.Meta.Suite, s.Name)
	case len(lacks) > 0:
		return fmt.Errorf("%w: the suite %q has no scenario %s of the baseline (suite %q): each would be reported missing", ErrNotComparable, s.Name, strings.Join(lacks, ", "), base.Meta.Suite)
	}
	return nil
}
