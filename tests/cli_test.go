package tests

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/devbulk/devbulk"
	"github.com/devbulk/devbulk/batch"
	"github.com/devbulk/devbulk/bench"
	"github.com/devbulk/devbulk/check"
	"github.com/devbulk/devbulk/runs"
)

// builtDir holds the devbulk command the tests run, built once per test
// process into a directory of its own (TestMain removes it): a path named
// after the pid once made a later test process, given the same pid, run a
// stale binary of an older source.
var (
	builtDir  string
	buildOnce sync.Once
	buildErr  error
)

// binary builds the devbulk command once per test process.
func binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		if builtDir, buildErr = os.MkdirTemp("", "devbulk-test-"); buildErr != nil {
			return
		}
		// Searchable by all: one test runs devbulk as nobody.
		if buildErr = os.Chmod(builtDir, 0o755); buildErr != nil {
			return
		}
		// As the README builds them: devbulk-plot beside devbulk, which
		// runs it to draw charts.
		for _, name := range []string{"devbulk", "devbulk-plot"} {
			build := exec.Command("go", "build", "-tags", "urfave_cli_no_docs", "-o", filepath.Join(builtDir, name), "../cmd/"+name)
			build.Env = append(os.Environ(), "CGO_ENABLED=0")
			if out, err := build.CombinedOutput(); err != nil {
				buildErr = fmt.Errorf("go build %s: %v\n%s", name, err, out)
				return
			}
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return filepath.Join(builtDir, "devbulk")
}

type result struct {
	code           int
	stdout, stderr string
}

// run runs devbulk with a private state directory.
func run(t *testing.T, state string, args ...string) result {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	cmd.Env = append(os.Environ(), "DEVBULK_STATE_DIR="+state)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return result{cmd.ProcessState.ExitCode(), out.String(), errb.String()}
}

// namedNetns makes a namespace with `ip netns add`, removed at the end.
func namedNetns(t *testing.T) string {
	t.Helper()
	name := fmt.Sprintf("dbktest%d", time.Now().UnixNano()%1e9)
	ip(t, "netns", "add", name)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "del", name).Run() })
	return name
}

func ip(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// linkNames lists the names of the links of a named namespace.
func linkNames(t *testing.T, ns string) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	for _, line := range strings.Split(ip(t, "-n", ns, "-o", "link", "show"), "\n") {
		if f := strings.Fields(line); len(f) > 1 {
			name, _, _ := strings.Cut(strings.TrimSuffix(f[1], ":"), "@")
			names[name] = true
		}
	}
	return names
}

func TestBadInputExitsTwoAndCreatesNothing(t *testing.T) {
	needRoot(t)
	state := t.TempDir()
	ns := namedNetns(t)
	before := linkNames(t, ns)
	badNoise := filepath.Join(state, "noise.txt")
	if err := os.WriteFile(badNoise, []byte("# a list\n[unclosed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		want string // in the one line on stderr
	}{
		{[]string{"create", "--netns", ns, "--kind", "ifb", "--count", "0"}, "count \"0\" out of range: ifb takes 1..1000000"},
		{[]string{"bench", "--kind", "ifb", "--count", "10", "--kernel-noise", badNoise}, `noise.txt:2: "[unclosed" is not a regular expression`},
		{[]string{"check", "--kernel-noise", "/nonexistent"}, "--kernel-noise: open /nonexistent: no such file"},
		{[]string{"create", "--netns", ns, "--kind", "ifb", "--count", "10", "--kernel-noise", badNoise}, `noise.txt:2: "[unclosed" is not a regular expression`},
		{[]string{"delete", "--netns", ns, "--kernel-noise", "/nonexistent"}, "--kernel-noise: open /nonexistent: no such file"},
		{[]string{"move", "--netns", ns, "--to", ns, "--kernel-noise", "/nonexistent"}, "--kernel-noise: open /nonexistent: no such file"},
		{[]string{"netns", "churn", "--kernel-noise", badNoise}, `noise.txt:2: "[unclosed" is not a regular expression`},
		{[]string{"netns", "create", "--count", "5", "--kernel-noise", badNoise}, `noise.txt:2: "[unclosed" is not a regular expression`},
		{[]string{"netns", "sequential", "--count", "5", "--kernel-noise", badNoise}, `noise.txt:2: "[unclosed" is not a regular expression`},
		{[]string{"create", "--netns", ns, "--kind", "ifb", "--count", "1000001"}, "takes 1..1000000"},
		{[]string{"create", "--netns", ns, "--kind", "veth", "--count", "1000000"}, "1000000 veth need about 84.9 GiB of kernel memory (89 KiB each); "},
		{[]string{"bench", "--kind", "veth", "--count", "1000,1000000", "--delete", "group"}, "1000000 veth need about 84.9 GiB of kernel memory (89 KiB each); "}, // no CI machine has 85 GiB
		{[]string{"create", "--netns", ns, "--kind", "ifb", "--count", "10", "--prefix", "muchtoolongpfxx"}, "at most 15"},
		{[]string{"create", "--netns", ns, "--kind", "veth", "--count", "10", "--prefix", "fourteenchars1"}, "at most 15"},
		{[]string{"create", "--netns", ns, "--kind", "vlan", "--count", "10", "--vlan-proto", "802.1x"}, "valid are 802.1Q and 802.1ad"},
		{[]string{"create", "--netns", ns, "--kind", "ipip", "--count", "10", "--remote-base", "10.0.0.1"}, "outside 198.18.0.0/15"},
		{[]string{"create", "--netns", ns, "--kind", "ipip", "--count", "131071"}, "takes 1..131070"},
		{[]string{"create", "--netns", ns, "--kind", "nosuch", "--count", "10"}, "unknown kind \"nosuch\""},
		{[]string{"create", "--netns", ns, "--kind", "ifb", "--count", "10", "--strategy", "fast"}, "unknown create strategy"},
		{[]string{"create", "--netns", ns, "--kind", "ifb", "--count", "10", "--parent", "eth0"}, "--parent applies to kinds with a lower device"},
		{[]string{"create", "--kind", "ifb", "--count", "10"}, "--netns: required: a name from `ip netns list`"},
		{[]string{"create", "--netns", "nosuchns", "--kind", "ifb", "--count", "10"}, "not found under /run/netns"},
		{[]string{"create", "--netns", ns, "--kind", "macvlan", "--count", "10", "--parent", "nosuchdev"}, "--parent nosuchdev: no such device in netns"},
		{[]string{"delete", "--netns", ns, "--strategy", "quick"}, "unknown delete strategy"},
		{[]string{"delete", "--netns", ns, "--strategy", "parallel", "--workers", "0"}, "--workers \"0\" out of range: 1..64"},
		{[]string{"delete", "--netns", ns, "--strategy", "netns"}, "netns needs a namespace devbulk made"},
		{[]string{"create", "--netns", ns, "--kind", "ifb", "--count", "many"}, "count \"many\" is not a whole number: ifb takes 1..1000000"},
		{[]string{"create", "--netns", ns, "--kind", "ifb"}, "--count is required: the number of links, 1..1000000 for ifb"},
		{[]string{"create", "--netns", ns, "--kind", "ifb", "--count", "10", "--vlan-proto", "802.1ad"}, "--vlan-proto applies to vlan, not ifb"},
		{[]string{"create", "--netns", ns, "--kind", "ifb", "--count", "10", "--remote-base", "198.18.0.9"}, "--remote-base applies to tunnels"},
		{[]string{"create", "--netns", ns, "--kind", "ifb", "--count", "10", "--json=x"}, "for --json"},
		{[]string{"delete", "--netns", ns, "--strategy", "serial", "--workers", "8"}, "--workers applies to the parallel strategies only"},
		{[]string{"bench", "--kind", "ifb", "--count", "50,50"}, "--count 50,50 gives 50 twice"},
		{[]string{"bench", "--kind", "ifb", "--delete", "serial,serial"}, "gives serial twice"},
		{[]string{"bench", "--kind", "ifb", "--delete", "auto,group"}, "gives group twice (auto is group)"},
		{[]string{"bench", "--kind", "ifb", "--workers", "8"}, "--workers applies to the parallel strategies only"},
		{[]string{"bench", "--kind", "ifb", "--bystander", "ping"}, `--bystander "ping": unknown operation "ping" (valid: `},
		{[]string{"delete", "--netns", "NS", "--strategy", "module", "--bystander", "link"}, "--bystander and --strategy module: the unload would take the prober's devices too"},
		{[]string{"bench", "--kind", "ifb", "--bystander", "link@NaN"}, `rate "NaN" out of range: 1..10000`},
		{[]string{"bench", "--kind", "ifb", "--count", "2", "--delete", "group", "--namespaces", "1,4"}, "--namespaces \"1,4\": 4 namespaces for --count 2 leaves some empty"},
		{[]string{"bench", "--kind", "ifb", "--delete", "group", "--namespaces", "2"}, "include 1, the reference"},
		{[]string{"bench", "--kind", "ifb", "--delete", "netns", "--namespaces", "1,2"}, "--namespaces takes the delete strategies that run in each namespace on their own"},
		{[]string{"bench", "--kind", "ifb", "--delete", "serial", "--window", "100"}, "--window applies to the group strategy only"},
		{[]string{"delete", "--netns", "NS", "--strategy", "parallel", "--window", "10"}, "--window applies to the group strategy only"},
		{[]string{"delete", "--netns", "NS", "--window", "0"}, `--window "0": "0" is not a window: give 1..1000000 devices`},
		{[]string{"bench", "--kind", "ifb", "--bystander", "link@0"}, `rate "0" out of range: 1..10000 operations a second`},
		{[]string{"bench", "--kind", "ifb", "--bystander", "getlink@10001"}, `rate "10001" out of range: 1..10000`},
		{[]string{"bench", "--kind", "ifb", "--bystander", "link", "--compare", "iproute2"}, "--bystander and --compare: give one"},
		{[]string{"check", "--suite", "REPEAT0"}, "repeat 0 out of range: 1..100"},
		{[]string{"check", "--suite", "STRINGCOUNT"}, "scenarios.bench.count: want a number, got a JSON string"},
		{[]string{"check", "--suite", "SUITE", "--save", "/nonexistent/dir/x.json"}, "--save: open /nonexistent/dir/x.json"},
		{[]string{"netns", "churn", "--payload", "sysctl:net.ipv4.nosuch=1"}, "this kernel has no net.ipv4.nosuch in a network namespace"},
		{[]string{"netns", "create", "--payload", "sysctl:net.ipv4.ip_forward=banana"}, "the kernel refuses the value \"banana\""},
		{[]string{"check", "--suite", "BADSYSCTL"}, "this kernel has no net.ipv4.nosuch"},
		{[]string{}, "give a command"},
		{[]string{"netns"}, "netns takes a command"},
		{[]string{"create", "--netns", ns, "--kind", "macvlan", "--count", "10", "--parent", "lo,lo"}, "given twice"},
		{[]string{"kinds", "extra"}, "kinds takes no arguments"},
		{[]string{"netns", "create", "extra"}, `netns create takes no arguments, got "extra"`},
		{[]string{"check", "--print-suite", "--suite", "SUITE"}, "--print-suite prints devbulk's own suite"},
		{[]string{"bench", "--kind", "ifb", "--delete", "lower"}, "applies to kinds with a lower device"},
		{[]string{"bench", "--kind", "ifb", "--count", "ten"}, "count \"ten\" is not a whole number"},
		{[]string{"bench", "--kind", "ifb", "--repeat", "0"}, "--repeat \"0\" out of range: 1..100"},
		{[]string{"bench", "--kind", "nosuch"}, "unknown kind"},
		{[]string{"bench", "--kind", "ifb", "--compare", "ifconfig"}, "the only comparison is iproute2"},
		{[]string{"bench", "--no-such-flag"}, "flag provided but not defined"},
		// Issue 40, item 6: every error one line, naming the flag or file.
		{[]string{"lava", "job"}, "lava job needs --kernel SPEC and --artifacts DIR"},
		{[]string{"lava", "job", "--kernel", "debian", "--artifacts", ""}, "(--artifacts is missing or empty)"},
		{[]string{"lava"}, "lava takes a command: job, run"},
		{[]string{"netns", "help", "nope"}, `unknown netns command "nope" (valid: churn, create, sequential)`},
		{[]string{"move", "--netns", ns, "--to", "nosuchns"}, `--to: netns "nosuchns" not found`},
		{[]string{"check", "--threshold", "abc"}, `--threshold "abc" is not a percentage`},
		{[]string{"check", "--suite", "TRUNCATED"}, "TRUNCATED: line 2: the JSON ends before the suite does"},
		{[]string{"check", "--baseline", "/nonexistent.json"}, "--baseline: open /nonexistent.json"},
		{[]string{"check", "--results", "NOTRESULTS"}, "(its YAML is not a list of test cases)"},
		{[]string{"rmmod", "--vlans", "0"}, `--vlans "0" out of range: 1..4094`},
		{[]string{"vm", "--cpus", "x", "--", "kinds"}, `--cpus "x" is not a whole number: guest CPUs (1..64)`},
		{[]string{"vm", "--timeout", "10", "--", "kinds"}, `--timeout "10" is not a duration`},
		{[]string{"vm", "--kernel", "/etc/passwd", "--", "kinds"}, "is not an x86 kernel image"},
		{[]string{"bench", "--kind", "ifb", "--repeat", "abc"}, `--repeat "abc" is not a whole number: give 1..100`},
	}
	dir := t.TempDir()
	suites := map[string]string{
		"REPEAT0":     `{"scenarios":[{"name":"a","repeat":0,"bench":{"kind":"ifb","count":10,"delete":["group"]}}]}`,
		"STRINGCOUNT": `{"scenarios":[{"name":"a","bench":{"kind":"ifb","count":"10","delete":["group"]}}]}`,
		"SUITE":       `{"scenarios":[{"name":"a","repeat":1,"bench":{"kind":"ifb","count":10,"delete":["group"]}}]}`,
		"TRUNCATED":   "{\"scenarios\":[\n{\"name\":\"a\"",
		"NOTRESULTS":  "hello: world\n",
		"BADSYSCTL": `{"scenarios":[{"name":"a","repeat":1,"bench":{"kind":"ifb","count":10,"delete":["group"]}},` +
			`{"name":"b","repeat":1,"netns":{"scenario":"churn","workers":1,"per_worker":5,"payload":"sysctl:net.ipv4.nosuch=1"}}]}`,
	}
	for name, s := range suites {
		os.WriteFile(filepath.Join(dir, name), []byte(s), 0o600)
	}
	binary(t) // built before the clock below starts: the first case timed go build under load
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			args := slices.Clone(c.args)
			for i, a := range args {
				if _, ok := suites[a]; ok {
					args[i] = filepath.Join(dir, a)
				}
			}
			start := time.Now()
			r := run(t, state, args...)
			if time.Since(start) > 5*time.Second {
				t.Errorf("refused only after %v: something ran first", time.Since(start))
			}
			if r.code != 2 {
				t.Errorf("exit %d, want 2; stderr %q", r.code, r.stderr)
			}
			if !strings.Contains(r.stderr, c.want) {
				t.Errorf("stderr %q does not say %q", r.stderr, c.want)
			}
			if lines := strings.Count(strings.TrimSpace(r.stderr), "\n"); lines > 0 && (len(c.args) < 2 || c.args[1] != "--no-such-flag") {
				t.Errorf("error takes %d lines, want one: %q", lines+1, r.stderr)
			}
			if r.stdout != "" {
				t.Errorf("bad input printed on stdout: %q", r.stdout)
			}
		})
	}
	if after := linkNames(t, ns); len(after) != len(before) {
		t.Errorf("bad input created devices: before %v, after %v", before, after)
	}
	if recs := records(state); len(recs) != 0 {
		t.Errorf("bad input left records: %v", recs)
	}
}

// Kinds or strategies this kernel cannot do exit 4, kselftest's SKIP.
func TestUnsupportedExitsFour(t *testing.T) {
	needRoot(t)
	checked := false
	for kind, ok := range probe {
		if ok {
			continue
		}
		checked = true
		r := run(t, t.TempDir(), "bench", "--kind", kind, "--count", "10")
		if r.code != 4 || !strings.Contains(r.stderr, "this kernel cannot create "+kind+": ") {
			t.Errorf("bench --kind %s: exit %d, stderr %q; want 4 and the reason", kind, r.code, r.stderr)
		}
		// create probes only once the kernel refused the kind: the same
		// answer, and nothing left behind, record included.
		state, ns := t.TempDir(), namedNetns(t)
		r = run(t, state, "create", "--netns", ns, "--kind", kind, "--count", "10")
		if r.code != 4 || !strings.Contains(r.stderr, "this kernel cannot create "+kind+": ") || len(records(state)) != 0 || len(linkNames(t, ns)) != 1 {
			t.Errorf("create --kind %s: exit %d, stderr %q, records %v, links %v; want 4, the reason, nothing left", kind, r.code, r.stderr, records(state), linkNames(t, ns))
		}
	}
	if batch.ModuleLoaded(needKind(t, "ifb")) != nil {
		checked = true
		r := run(t, t.TempDir(), "bench", "--kind", "ifb", "--count", "10", "--delete", "module")
		if r.code != 4 {
			t.Errorf("module strategy where ifb is not a module: exit %d, stderr %q", r.code, r.stderr)
		}
	}
	if _, err := os.Stat("/sys/kernel/tracing/available_tracers"); err != nil {
		// --profile where tracing is refused: one line, the reason.
		checked = true
		for _, args := range [][]string{{"bench", "--kind", "ifb", "--count", "10", "--delete", "group", "--profile"},
			{"netns", "churn", "--workers", "1", "--per-worker", "2", "--profile"}} {
			r := run(t, t.TempDir(), args...)
			if r.code != 4 || !strings.Contains(r.stderr, "--profile: kernel profile unavailable: ") {
				t.Errorf("%v: exit %d, stderr %q; want 4 and the reason", args, r.code, r.stderr)
			}
		}
	}
	// A move sweep of a kind whose runs devbulk does not move: refused
	// before anything else, saying why.
	for kind, why := range map[string]string{"bridge": "the kernel keeps a bridge in its namespace", "macvlan": "a run's lower devices would stay behind"} {
		if r := run(t, t.TempDir(), "faults", "--kind", kind, "--path", "create,move"); r.code != 4 || !strings.Contains(r.stderr, "devbulk does not move a run of "+kind+" ("+why+")") {
			t.Errorf("faults --kind %s --path move: exit %d, stderr %q; want 4 saying why", kind, r.code, r.stderr)
		}
	}
	// Fault injection outside devbulk's VM: refused, whatever the kernel.
	if r := run(t, t.TempDir(), "faults", "--kind", "ifb"); r.code != 4 || !strings.Contains(r.stderr, "devbulk does it only in its VM") {
		t.Errorf("faults on the host: exit %d, stderr %q; want 4 and the reason", r.code, r.stderr)
	}
	if !checked {
		t.Skip("this kernel supports every kind, ifb is a module, and it allows tracing: nothing is unsupported here")
	}
}

func TestCreateAndDeleteInNamedNetns(t *testing.T) {
	needKind(t, "ifb")
	needKind(t, "macvlan")
	state := t.TempDir()
	ns := namedNetns(t)
	ip(t, "-n", ns, "link", "add", "own0", "type", "ifb")
	ip(t, "-n", ns, "link", "add", "own1", "group", "5", "type", "ifb")

	r := run(t, state, "create", "--netns", ns, "--kind", "ifb", "--count", "300", "--json")
	if r.code != 0 {
		t.Fatalf("create: exit %d: %s", r.code, r.stderr)
	}
	var doc struct {
		Create batch.Phase  `json:"create"`
		Record *runs.Record `json:"record"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("create --json: %v\n%s", err, r.stdout)
	}
	if doc.Create.Devices != 300 || len(doc.Record.Links) != 300 || doc.Record.Group == 0 {
		t.Fatalf("create document: %+v", doc)
	}
	if r := run(t, state, "create", "--netns", ns, "--kind", "macvlan", "--count", "50", "--prefix", "mv", "--up"); r.code != 0 {
		t.Fatalf("create macvlan: exit %d: %s", r.code, r.stderr)
	}
	// A second run with the same names is refused before anything is made.
	if r := run(t, state, "create", "--netns", ns, "--kind", "ifb", "--count", "10"); r.code != 2 || !strings.Contains(r.stderr, "already exists") {
		t.Errorf("clashing create: exit %d, stderr %q", r.code, r.stderr)
	}
	names := linkNames(t, ns)
	for _, n := range []string{"dbk0", "dbk299", "mv0", "mv49", "mvl0"} {
		if !names[n] {
			t.Errorf("%s missing after create", n)
		}
	}

	if r := run(t, state, "delete", "--netns", ns, "--kind", "ifb", "--strategy", "pipelined"); r.code != 0 {
		t.Fatalf("delete ifb: exit %d: %s", r.code, r.stderr)
	}
	names = linkNames(t, ns)
	if names["dbk0"] || !names["mv0"] {
		t.Errorf("delete --kind ifb: dbk0 present %v, mv0 present %v", names["dbk0"], names["mv0"])
	}
	if r := run(t, state, "delete", "--netns", ns, "--strategy", "lower"); r.code != 0 {
		t.Fatalf("delete lower: exit %d: %s", r.code, r.stderr)
	}
	names = linkNames(t, ns)
	want := map[string]bool{"lo": true, "own0": true, "own1": true}
	if len(names) != len(want) || !names["own0"] || !names["own1"] {
		t.Errorf("after deleting every run, the namespace holds %v, want %v", names, want)
	}
	if recs := records(state); len(recs) != 0 {
		t.Errorf("records left: %v", recs)
	}
}

// start starts devbulk with a private state directory, its stdout
// collected, and does not wait for it.
func start(t *testing.T, state string, args ...string) (*exec.Cmd, *strings.Builder) {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	cmd.Env = append(os.Environ(), "DEVBULK_STATE_DIR="+state)
	var stdout strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &strings.Builder{} // stderr: cmd.Stderr.(*strings.Builder)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() }) // a failed test leaves nothing running
	return cmd, &stdout
}

// records lists the record files in a state directory.
func records(state string) []string {
	recs, _ := filepath.Glob(filepath.Join(state, "*.json"))
	return recs
}

// deleteUnderWay creates n ifb in ns and starts a serial delete of them,
// returning once the delete has taken dbk5.
func deleteUnderWay(t *testing.T, state, ns string, n int) (*exec.Cmd, *strings.Builder) {
	t.Helper()
	if r := run(t, state, "create", "--netns", ns, "--kind", "ifb", "--count", strconv.Itoa(n)); r.code != 0 {
		t.Fatalf("create: exit %d: %s", r.code, r.stderr)
	}
	cmd, stdout := start(t, state, "delete", "--netns", ns, "--strategy", "serial")
	waitFor(t, "dbk5 deleted", func() bool { return !linkNames(t, ns)["dbk5"] })
	return cmd, stdout
}

// startCreate starts a slow create and waits until devices exist.
func startCreate(t *testing.T, state, ns string) *exec.Cmd {
	t.Helper()
	cmd, _ := start(t, state, "create", "--netns", ns, "--kind", "ifb", "--count", "30000", "--strategy", "serial")
	waitFor(t, "dbk100 created", func() bool { return linkNames(t, ns)["dbk100"] })
	return cmd
}

// waitFor polls cond until it holds; the bound only catches a hang.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("%s never happened", what)
}

// holdsNetns reports whether process pid holds a network namespace by a
// file descriptor (a bench's or check's throwaway namespace).
func holdsNetns(pid int) bool {
	fds, _ := filepath.Glob(fmt.Sprintf("/proc/%d/fd/*", pid))
	for _, fd := range fds {
		if l, err := os.Readlink(fd); err == nil && strings.HasPrefix(l, "net:[") {
			return true
		}
	}
	return false
}

// Ctrl-C (SIGINT) or SIGTERM in the middle of any command: exit 130,
// nothing left behind, nothing saved, what was done said.
func TestInterruptLeavesNothingBehind(t *testing.T) {
	needKind(t, "ifb")
	for _, c := range []struct {
		name string
		kind string // needed by the command
		sig  syscall.Signal
		args []string
	}{
		{"create serial", "ifb", syscall.SIGINT, []string{"create", "--kind", "ifb", "--count", "30000", "--strategy", "serial"}},
		{"create pipelined", "ifb", syscall.SIGINT, []string{"create", "--kind", "ifb", "--count", "100000"}},
		{"create macvlan, SIGTERM", "macvlan", syscall.SIGTERM, []string{"create", "--kind", "macvlan", "--count", "30000", "--strategy", "serial"}},
		{"bench", "ifb", syscall.SIGINT, []string{"bench", "--kind", "ifb", "--count", "3000", "--delete", "serial", "--json"}},
		{"check", "ifb", syscall.SIGTERM, []string{"check", "--suite", "SUITE", "--save", "SAVED"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			needKind(t, c.kind)
			state, dir := t.TempDir(), t.TempDir()
			ns := namedNetns(t)
			suite, saved := filepath.Join(dir, "suite.json"), filepath.Join(dir, "saved.json")
			os.WriteFile(suite, []byte(`{"name":"s","scenarios":[{"name":"a","bench":{"kind":"ifb","count":3000,"delete":["serial"]}}]}`), 0o600)
			args := slices.Clone(c.args)
			for i, a := range args {
				args[i] = strings.NewReplacer("SUITE", suite, "SAVED", saved).Replace(a)
			}
			if args[0] == "create" {
				args = append(args, "--netns", ns)
			}
			cmd, stdout := start(t, state, args...)
			if args[0] == "create" {
				waitFor(t, "dbk100 created", func() bool { return linkNames(t, ns)["dbk100"] })
			} else {
				waitFor(t, "a throwaway namespace", func() bool { return holdsNetns(cmd.Process.Pid) })
			}
			cmd.Process.Signal(c.sig)
			err := cmd.Wait()
			if code := cmd.ProcessState.ExitCode(); code != 130 {
				t.Errorf("exit %d (%v), want 130", code, err)
			}
			if names := linkNames(t, ns); len(names) != 1 {
				t.Errorf("after the signal the namespace holds %d devices, want only lo", len(names))
			}
			if recs := records(state); len(recs) != 0 {
				t.Errorf("records left: %v", recs)
			}
			if _, err := os.Stat(saved); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("an interrupted check saved %s", saved)
			}
			if args[0] == "bench" && stdout.Len() > 0 {
				t.Errorf("an interrupted bench printed a result: %q", stdout.String())
			}
			// Issue 40, item 5: "interrupted" and where, never Go's words.
			if errOut := cmd.Stderr.(*strings.Builder).String(); strings.Contains(errOut, "context canceled") ||
				args[0] == "bench" && !strings.Contains(errOut, "devbulk: interrupted during N=3000 serial delete, repeat 1 (its throwaway namespace released") {
				t.Errorf("an interrupted %s said %q", args[0], errOut)
			}
		})
	}
}

// An interrupted delete says how far it got, keeps the record of what is
// left, and cleanup finishes it.
func TestInterruptedDeleteSaysHowFar(t *testing.T) {
	needKind(t, "ifb")
	state := t.TempDir()
	ns := namedNetns(t)
	cmd, stdout := deleteUnderWay(t, state, ns, 400)
	cmd.Process.Signal(syscall.SIGINT)
	cmd.Wait()
	left := len(linkNames(t, ns)) - 1
	m := regexp.MustCompile(`interrupted: deleted (\d+) of 400 ifb links`).FindStringSubmatch(stdout.String())
	if cmd.ProcessState.ExitCode() != 130 || m == nil || m[1] != strconv.Itoa(400-left) {
		t.Fatalf("exit %d, stdout %q; %d devices left", cmd.ProcessState.ExitCode(), stdout.String(), left)
	}
	if !strings.Contains(stdout.String(), fmt.Sprintf("record of run dbk (ifb, group")) {
		t.Errorf("no word of the record kept: %q", stdout.String())
	}
	if r := run(t, state, "cleanup"); r.code != 0 || len(linkNames(t, ns)) != 1 {
		t.Errorf("cleanup after an interrupted delete: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
}

// Cleanup after a one-by-one delete killed with -9 says that the killed
// delete took what is gone, in one short line, never "by someone else"
// device by device (issue 44, item 4).
func TestCleanupAfterKilledDelete(t *testing.T) {
	needKind(t, "ifb")
	state := t.TempDir()
	ns := namedNetns(t)
	cmd, _ := deleteUnderWay(t, state, ns, 400)
	cmd.Process.Kill()
	cmd.Wait()
	gone := 400 - (len(linkNames(t, ns)) - 1)
	r := run(t, state, "cleanup")
	want := regexp.MustCompile(fmt.Sprintf(`^run dbk .*: deleted %d of 400 ifb links in netns %s; the other %d were gone already: the delete killed mid-way \(devbulk pid \d+\) had got that far\n$`, 400-gone, ns, gone))
	if r.code != 0 || len(linkNames(t, ns)) != 1 || !want.MatchString(r.stdout) {
		t.Errorf("cleanup after a killed delete: exit %d, %d left; want one line matching %s\n%s%s", r.code, len(linkNames(t, ns))-1, want, r.stdout, r.stderr)
	}
}

func TestCleanupAfterKill(t *testing.T) {
	needKind(t, "ifb")
	state := t.TempDir()
	ns := namedNetns(t)
	ip(t, "-n", ns, "link", "add", "dbk99999", "type", "ifb") // prefix-alike, not devbulk's
	cmd := startCreate(t, state, ns)
	cmd.Process.Kill()
	cmd.Wait()
	n := len(linkNames(t, ns)) - 2
	if n < 100 {
		t.Fatal("nothing left behind to clean up")
	}
	// Issue 44, item 5: runs counts what a killed create left, not the 0
	// its record lists.
	if r := run(t, state, "runs"); r.code != 0 || !regexp.MustCompile(fmt.Sprintf(`(?m)^dbk +ifb +%d found .*creating \(killed\)`, n)).MatchString(r.stdout) {
		t.Errorf("runs after a killed create of %d: exit %d\n%s%s", n, r.code, r.stdout, r.stderr)
	}
	// Issue 22 item 6: it reports the devices it deleted, not "stale, none
	// of its 0 devices".
	if r := run(t, state, "cleanup"); r.code != 0 || !strings.Contains(r.stdout, fmt.Sprintf("deleted %d of %d ifb links", n, n)) {
		t.Fatalf("cleanup: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	names := linkNames(t, ns)
	if len(names) != 2 || !names["dbk99999"] {
		t.Errorf("after cleanup the namespace holds %d devices, want lo and dbk99999", len(names))
	}
	if recs := records(state); len(recs) != 0 {
		t.Errorf("records left: %v", recs)
	}
}

func TestBenchJSON(t *testing.T) {
	needKind(t, "ifb")
	r := run(t, t.TempDir(), "bench", "--kind", "ifb", "--count", "50,100", "--delete", "group,serial", "--compare", "iproute2", "--json")
	if r.code != 0 {
		t.Fatalf("bench: exit %d: %s", r.code, r.stderr)
	}
	var rep bench.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("bench --json: %v\n%s", err, r.stdout)
	}
	if rep.Kernel == "" || rep.CPUs == 0 || rep.Kind != "ifb" || rep.MaxRSSKiB == 0 || len(rep.Runs) != 4 {
		t.Fatalf("report header: %+v", rep)
	}
	for _, c := range rep.Runs {
		// Latencies are per request only where each request has its own sendmsg.
		if c.Create.Devices != c.Count || c.Create.WallNS <= 0 || c.Create.Requests != nil {
			t.Errorf("create phase: %+v", c.Create)
		}
		if serial := c.Delete.Strategy == "serial"; serial != (c.Delete.Requests != nil) ||
			(serial && c.Delete.Requests.Count != c.Count) {
			t.Errorf("delete %s latencies: %+v", c.Delete.Strategy, c.Delete.Requests)
		}
		if c.Delete.Devices != c.Count || c.Delete.Failed != 0 || c.Delete.WallNS <= 0 {
			t.Errorf("delete phase: %+v", c.Delete)
		}
		if c.IPCreate == nil || c.IPCreate.WallNS <= 0 || c.IPDelete == nil || c.IPDelete.WallNS <= 0 {
			t.Errorf("iproute2 phases missing: %+v %+v", c.IPCreate, c.IPDelete)
		}
	}
	// Side by side: the second repetition would run iproute2 first; with
	// one, the comparisons are there and say that nothing can be concluded.
	if len(rep.Comparisons) != 6 || rep.Comparisons[0].Verdict != devbulk.TooFew || rep.Comparisons[0].A != "devbulk" {
		t.Errorf("comparisons: %+v", rep.Comparisons)
	}
	if !strings.Contains(run(t, t.TempDir(), "bench", "--kind", "ifb", "--count", "50", "--delete", "group,serial").stdout, "\nIn words:\n  N=50 serial: ") {
		t.Error("the bench table does not end with its result in words")
	}
}

// A bench says what its devices cost the kernel in memory: present and
// positive for 1000 ifb (about 42 KiB each on 6.18), in the JSON, the
// table and the benchstat lines of a check.
func TestBenchKernelMemory(t *testing.T) {
	needKind(t, "ifb")
	rep := benchJSON(t, "--kind", "ifb", "--count", "1000", "--delete", "group")
	m := rep.Runs[0].Create.KernelMem
	if m == nil || m.Method != bench.MethodObjects || rep.Runs[0].Delete.KernelMem != nil {
		t.Fatalf("kernel memory: create %+v, delete %+v", m, rep.Runs[0].Delete.KernelMem)
	}
	if m.Withheld != "" && strings.Contains(m.Withheld, "other activity") { // tests of other packages ran beside it
		t.Skipf("1000 ifb: %s", m.Withheld)
	}
	if m.PerDeviceKiB <= 0 || m.Withheld != "" || m.SlabReclaimableKiB+m.SlabUnreclaimableKiB <= 0 {
		t.Fatalf("kernel memory of 1000 ifb: %+v", m)
	}
	t.Logf("1000 ifb: %.1f KiB per device (%+v)", m.PerDeviceKiB, *m)
	lines := check.BenchLines(&rep)
	if !slices.ContainsFunc(lines[0].Values, func(v check.Value) bool { return v.Unit == check.UnitKernelKiB && v.Value > 0 }) {
		t.Errorf("the create line has no %s: %+v", check.UnitKernelKiB, lines[0])
	}
	table := run(t, t.TempDir(), "bench", "--kind", "ifb", "--count", "1000", "--delete", "group")
	if !strings.Contains(table.stdout, "kernel KiB/dev") || !strings.Contains(table.stdout, "KiB per device; MemAvailable") && !strings.Contains(table.stdout, "other activity on the machine") {
		t.Errorf("the table says nothing of the kernel's memory:\n%s", table.stdout)
	}
}

// The scale curve for small counts: every count has its create, group
// delete and namespace release with ms and the kernel's KiB per device,
// and both charts draw (ms per device, and with --memory KiB per device);
// --memory of a document that is no bench is a usage error.
func TestScaleCurve(t *testing.T) {
	needKind(t, "ifb")
	dir := t.TempDir()
	r := run(t, dir, "bench", "--kind", "ifb", "--count", "300,3000", "--delete", "group,netns", "--json")
	var rep bench.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); r.code != 0 || err != nil {
		t.Fatalf("bench: exit %d, %v\n%s", r.code, err, r.stderr)
	}
	seen := map[string]bool{}
	for _, c := range rep.Runs {
		if m := c.Create.KernelMem; c.Create.MsPerDevice <= 0 || c.Delete.MsPerDevice <= 0 || m == nil || m.PerDeviceKiB <= 0 && !strings.Contains(m.Withheld, "other activity") {
			t.Errorf("N=%d %s: create %.3f ms/dev, delete %.3f ms/dev, kernel memory %+v", c.Count, c.Delete.Strategy,
				c.Create.MsPerDevice, c.Delete.MsPerDevice, c.Create.KernelMem)
		}
		seen[fmt.Sprintf("%d %s", c.Count, c.Delete.Strategy)] = true
	}
	if len(seen) != 4 {
		t.Errorf("cycles %v, want 300 and 3000 by group and netns", seen)
	}
	doc := filepath.Join(dir, "scale.json")
	if err := os.WriteFile(doc, []byte(r.stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"plot", doc, "-o", "-"}, {"plot", "--memory", doc, "-o", "-"}} {
		if p := run(t, dir, args...); p.code != 0 || !strings.HasPrefix(strings.TrimSpace(p.stdout), "<?xml") || !strings.Contains(p.stdout, "<svg") {
			t.Errorf("%v: exit %d, %s", args, p.code, p.stderr)
		}
	}
	other := filepath.Join(dir, "other.json")
	if err := os.WriteFile(other, []byte(`{"tool":"devbulk","scenario":"churn"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if p := run(t, dir, "plot", "--memory", other); p.code != 2 || !strings.Contains(p.stderr, "--memory draws a bench report") {
		t.Errorf("plot --memory of a netns document: exit %d, %s", p.code, p.stderr)
	}
}

// Charts are drawn by devbulk-plot (beside devbulk or in PATH). Without it,
// plot and --svg say what is missing (exit 4) before any work, and write
// nothing; everything else runs.
func TestChartsNeedDevbulkPlot(t *testing.T) {
	alone := filepath.Join(t.TempDir(), "devbulk")
	b, err := os.ReadFile(binary(t))
	if err == nil {
		err = os.WriteFile(alone, b, 0o755)
	}
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	doc, svg := filepath.Join(dir, "r.json"), filepath.Join(dir, "r.svg")
	if err := os.WriteFile(doc, []byte(`{"tool":"devbulk","kind":"ifb","runs":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"plot", doc, "-o", svg}, {"bench", "--kind", "ifb", "--count", "10", "--svg", svg}} {
		var stdout, stderr strings.Builder
		cmd := exec.Command(alone, args...)
		cmd.Env = append(os.Environ(), "DEVBULK_STATE_DIR="+dir, "PATH=/usr/sbin:/usr/bin:/sbin:/bin")
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if code := cmd.ProcessState.ExitCode(); code != 4 || !strings.Contains(stderr.String(), "drawing SVG needs devbulk-plot beside devbulk or in PATH") {
			t.Errorf("%v without devbulk-plot: exit %d (%v), %s", args, code, err, stderr.String())
		}
		if stdout.Len() > 0 {
			t.Errorf("%v without devbulk-plot ran: %s", args, stdout.String())
		}
		if _, err := os.Stat(svg); err == nil {
			t.Errorf("%v without devbulk-plot left %s", args, svg)
		}
	}
	if r, err := exec.Command(alone, "--version").CombinedOutput(); err != nil {
		t.Errorf("--version without devbulk-plot: %v: %s", err, r)
	}
}

// benchJSON runs a bench with --json and reads its report.
func benchJSON(t *testing.T, args ...string) bench.Report {
	t.Helper()
	r := run(t, t.TempDir(), append(append([]string{"bench"}, args...), "--json")...)
	var rep bench.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); r.code != 0 || err != nil {
		t.Fatalf("bench: exit %d, %v\n%s", r.code, err, r.stderr)
	}
	return rep
}

// Peak RSS stays under 40 MiB for a bench of 20 000 devices (README:
// "Memory": 28-29 MiB on an idle machine, 36 MiB once inside a CI run; it
// was 67 MiB before lookups were chunked and the heap paced).
func TestBenchMemory(t *testing.T) {
	needKind(t, "ifb")
	rep := benchJSON(t, "--kind", "ifb", "--count", "20000", "--delete", "group")
	t.Logf("peak RSS %d KiB", rep.MaxRSSKiB)
	if rep.MaxRSSKiB <= 0 || rep.MaxRSSKiB > 40<<10 {
		t.Errorf("peak RSS %d KiB for 20 000 devices, want at most 40 MiB", rep.MaxRSSKiB)
	}
}

// --netns current works in whatever namespace devbulk runs in (here one made
// by `ip netns exec`), and cleanup run from elsewhere still finds that run.
func TestCurrentNetns(t *testing.T) {
	needKind(t, "ifb")
	state := t.TempDir()
	ns := namedNetns(t)
	inNetns := func(args ...string) result {
		cmd := exec.Command("ip", append([]string{"netns", "exec", ns, binary(t)}, args...)...)
		cmd.Env = append(os.Environ(), "DEVBULK_STATE_DIR="+state)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
		return result{code: cmd.ProcessState.ExitCode(), stderr: string(out)}
	}
	for _, prefix := range []string{"cur", "left"} {
		if r := inNetns("create", "--netns", "current", "--kind", "ifb", "--count", "20", "--prefix", prefix); r.code != 0 {
			t.Fatalf("create --netns current: exit %d: %s", r.code, r.stderr)
		}
	}
	if !linkNames(t, ns)["cur19"] {
		t.Fatal("cur19 not created in the namespace devbulk ran in")
	}
	if r := inNetns("delete", "--netns", "current", "--prefix", "cur"); r.code != 0 {
		t.Fatalf("delete --netns current: exit %d: %s", r.code, r.stderr)
	}
	if names := linkNames(t, ns); names["cur0"] || !names["left0"] {
		t.Fatalf("delete --prefix cur: cur0 present %v, left0 present %v", names["cur0"], names["left0"])
	}
	// From the host's namespace, "current" means another namespace: cleanup
	// must find the run's by its inode.
	if r := run(t, state, "cleanup"); r.code != 0 || !linkNames(t, ns)["left0"] {
		t.Fatalf("cleanup without --all: exit %d: %s; it must keep completed runs", r.code, r.stderr)
	}
	if r := run(t, state, "cleanup", "--all"); r.code != 0 {
		t.Fatalf("cleanup --all: exit %d: %s", r.code, r.stderr)
	}
	if names := linkNames(t, ns); len(names) != 1 {
		t.Errorf("after cleanup the namespace holds %v", names)
	}
}

// delete finds the devices of a create that was killed before it recorded them.
func TestDeleteAfterKill(t *testing.T) {
	needKind(t, "ifb")
	state := t.TempDir()
	ns := namedNetns(t)
	cmd := startCreate(t, state, ns)
	cmd.Process.Kill()
	cmd.Wait()
	if r := run(t, state, "delete", "--netns", ns); r.code != 0 {
		t.Fatalf("delete: exit %d: %s", r.code, r.stderr)
	}
	if names := linkNames(t, ns); len(names) != 1 {
		t.Errorf("after delete the namespace holds %d devices, want only lo", len(names))
	}
}

// Progress bars go to stderr only when it is a terminal (here a pty made
// by script(1)), never with --quiet, and stdout stays the JSON document.
func TestProgressOnlyOnATerminal(t *testing.T) {
	needKind(t, "ifb")
	if _, err := exec.LookPath("script"); err != nil {
		t.Skip("script(1) not installed (bsdutils)")
	}
	dir := t.TempDir()
	for _, quiet := range []bool{false, true} {
		out, tty := filepath.Join(dir, "out.json"), filepath.Join(dir, "tty")
		cmd := fmt.Sprintf("%s bench --kind ifb --count 200 --delete serial --json > %s", binary(t), out)
		if quiet {
			cmd += " --quiet"
		}
		if b, err := exec.Command("script", "-q", "-e", "-c", cmd, tty).CombinedOutput(); err != nil {
			t.Fatalf("script -c %q: %v\n%s", cmd, err, b)
		}
		var rep bench.Report
		if b, _ := os.ReadFile(out); json.Unmarshal(b, &rep) != nil || len(rep.Runs) != 1 {
			t.Errorf("quiet=%v: stdout is not the result document:\n%s", quiet, b)
		}
		b, _ := os.ReadFile(tty)
		bar := strings.Contains(string(b), "N=200 serial delete") && strings.Contains(string(b), "/200, ")
		if bar == quiet {
			t.Errorf("quiet=%v: progress bar shown %v; the terminal got:\n%q", quiet, bar, b)
		}
	}
	r := run(t, dir, "bench", "--kind", "ifb", "--count", "200", "--delete", "serial", "--json")
	if r.code != 0 || r.stderr != "" {
		t.Errorf("not a terminal: exit %d, stderr %q", r.code, r.stderr)
	}
}

// Exit codes the README promises, from the command line: 2 without
// CAP_NET_ADMIN (before anything is made), 1 for a create the kernel
// refused (with the kernel's error, and nothing left of it).
func TestExitCodesFromTheKernel(t *testing.T) {
	needKind(t, "macvlan")
	state := t.TempDir()
	ns := namedNetns(t)
	bin := binary(t)
	for _, args := range [][]string{
		{"create", "--netns", ns, "--kind", "ifb", "--count", "3"},
		{"bench", "--kind", "ifb", "--count", "3"},
		{"cleanup"},
	} {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "DEVBULK_STATE_DIR="+state)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		out, _ := cmd.CombinedOutput()
		if code := cmd.ProcessState.ExitCode(); code != 2 || !strings.Contains(string(out), "needs CAP_NET_ADMIN") {
			t.Errorf("%v as nobody: exit %d, %q", args, code, out)
		}
	}
	if r := run(t, state, "create", "--netns", ns, "--kind", "ifb", "--count", "5", "--prefix", "a"); r.code != 0 {
		t.Fatalf("create: exit %d: %s", r.code, r.stderr)
	}
	// A macvlan on the loopback device: the kernel refuses each.
	r := run(t, state, "create", "--netns", ns, "--kind", "macvlan", "--count", "5", "--prefix", "b", "--parent", "lo")
	if r.code != 1 || !strings.Contains(r.stderr, "invalid argument") {
		t.Errorf("macvlan create on lo: exit %d, stderr %q", r.code, r.stderr)
	}
	names := linkNames(t, ns)
	if names["b0"] || len(names) != 6 {
		t.Errorf("after the refused create the namespace holds %v", names)
	}
	if recs := records(state); len(recs) != 1 {
		t.Errorf("records: %v, want the first run's only", recs)
	}
}

// A named selection (--prefix, --kind) that matches no run is exit 1 with
// one line naming what is recorded, and nothing is touched; with
// --ignore-not-found, exit 0. A namespace with no run at all is nothing to
// do (exit 0) (issue 44, item 7).
func TestSelectionMatchingNothing(t *testing.T) {
	needKind(t, "ifb")
	state, ns, other := t.TempDir(), namedNetns(t), namedNetns(t)
	if r := run(t, state, "create", "--netns", ns, "--kind", "ifb", "--count", "3"); r.code != 0 {
		t.Fatalf("create: exit %d: %s", r.code, r.stderr)
	}
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"delete", "--netns", ns, "--prefix", "nosuch"}, 1},
		{[]string{"delete", "--netns", ns, "--kind", "veth"}, 1},
		{[]string{"move", "--netns", ns, "--to", other, "--prefix", "nosuch"}, 1},
		{[]string{"delete", "--netns", ns, "--kind", "veth", "--ignore-not-found"}, 0},
		{[]string{"move", "--netns", ns, "--to", other, "--prefix", "nosuch", "--ignore-not-found"}, 0},
		{[]string{"delete", "--netns", other}, 0},
	} {
		r := run(t, state, c.args...)
		if r.code != c.code || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, "no devbulk run") || ours(t, ns) != 3 {
			t.Errorf("%v: exit %d (want %d), %d of 3 left\n%s%s", c.args, r.code, c.code, ours(t, ns), r.stdout, r.stderr)
		}
	}
}

// A windowed group delete names its window where it reports, as bench
// names it (group-wW), in words and in JSON (issue 44, item 10).
func TestDeleteWindowIsReported(t *testing.T) {
	needKind(t, "ifb")
	state, ns := t.TempDir(), namedNetns(t)
	for _, asJSON := range []bool{false, true} {
		if r := run(t, state, "create", "--netns", ns, "--kind", "ifb", "--count", "300"); r.code != 0 {
			t.Fatalf("create: exit %d: %s", r.code, r.stderr)
		}
		args := []string{"delete", "--netns", ns, "--window", "100"}
		if asJSON {
			args = append(args, "--json")
		}
		r := run(t, state, args...)
		var doc struct{ Delete []struct{ Strategy string } }
		ok := strings.Contains(r.stdout, "deleted 300 of 300 ifb links dbk* by group-w100 in ")
		if asJSON {
			ok = json.Unmarshal([]byte(r.stdout), &doc) == nil && len(doc.Delete) == 1 && doc.Delete[0].Strategy == "group-w100"
		}
		if r.code != 0 || !ok {
			t.Errorf("%v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
}
