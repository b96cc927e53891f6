package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/devbulk/devbulk"
	"github.com/devbulk/devbulk/netnsbench"
)

// Every netns scenario, through the library, here and in the VM
// (TestVMNetns): each run counts what it made, sees the drain end, and
// leaves no namespace behind — a run fails when the net_namespace slab
// count is not back to its value before the run once the drain is over.
func TestNetnsScenarios(t *testing.T) {
	needRoot(t)
	kind := "ifb" // the devices payload: dummy where the kernel has it (the VM)
	if probe["dummy"] {
		kind = "dummy"
	}
	if !probe[kind] {
		t.Skipf("no %s devices on this kernel", kind)
	}
	mounts := t.TempDir()
	payload := func(s string) netnsbench.Payload {
		p, err := netnsbench.ParsePayload(s)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	ctx := context.Background()
	churn := func(w, n int, p string) func() (*netnsbench.Report, error) {
		return func() (*netnsbench.Report, error) {
			return netnsbench.Churn(ctx, netnsbench.ChurnOptions{Workers: w, PerWorker: n, Payload: payload(p)})
		}
	}
	for _, sc := range []struct {
		name string
		run  func() (*netnsbench.Report, error)
	}{
		{"churn-lo-up", churn(2, 50, "lo-up")},
		{"churn-devices", churn(1, 20, "devices:"+kind+":3")},
		{"churn-veth", churn(2, 10, "veth")},
		{"churn-exec", churn(1, 10, "exec:ip link set lo up")},
		{"sequential", func() (*netnsbench.Report, error) {
			return netnsbench.Sequential(ctx, netnsbench.SequentialOptions{Count: 50})
		}},
		{"create-veth", func() (*netnsbench.Report, error) {
			return netnsbench.Keep(ctx, netnsbench.KeepOptions{Count: 60, Payload: payload("veth"), Step: 20, MountDir: mounts})
		}},
	} {
		t.Run(sc.name, func(t *testing.T) {
			r, err := sc.run()
			if err != nil {
				t.Fatal(err)
			}
			run := r.Runs[0]
			if run.Namespaces != run.Workers*run.PerWorker || run.NetnsPerSec <= 0 || len(run.Series) == 0 {
				t.Fatalf("run %+v", run)
			}
			if run.DrainMethod == "" || run.DrainNS <= 0 {
				t.Errorf("drain not detected: %d ns, method %q", run.DrainNS, run.DrainMethod)
			}
			if last := run.Series[len(run.Series)-1]; last.Created != int64(run.Namespaces) || last.Released != last.Created {
				t.Errorf("%d namespaces: last sample %+v", run.Namespaces, last)
			}
			// Every namespace's setup is timed, but in the sequential
			// loop, which has no payload to time.
			if want := run.Namespaces; r.Scenario == "sequential" && run.Setup != nil || r.Scenario != "sequential" && (run.Setup == nil || run.Setup.Count != want || run.Setup.P50NS <= 0) {
				t.Errorf("%s: setup %+v, want %d namespaces'", r.Scenario, run.Setup, want)
			}
			if r.Scenario == "create" {
				if len(run.Rate) != 3 || run.Rate[2].Created != 60 || run.Rate[0].NetnsPerSec <= 0 || run.ReleaseNS <= 0 {
					t.Errorf("create: rate curve %+v, release %d ns", run.Rate, run.ReleaseNS)
				}
			}
		})
	}
	if ents, _ := os.ReadDir(mounts); len(ents) != 0 {
		t.Errorf("%d entries left in the mount directory", len(ents))
	}
}

// Composed payloads, as the 2014 regression's script made each namespace:
// loopback up, IP forwarding on, two veth pairs to a parent. Every
// namespace gets them (an exec item or step checks the sysctl and eth1
// from inside; the step sees them in /sys too, which takes ip netns exec's
// /sys remount), the exec step is its own phase with its own curve,
// and every namespace is gone afterwards (the drain's count back to where
// it was: the run fails otherwise).
func TestNetnsRouterPayload(t *testing.T) {
	needKind(t, "veth")
	forwarding := `test "$(cat /proc/sys/net/ipv4/ip_forward)" = 1`
	r := run(t, t.TempDir(), "netns", "churn", "--workers", "2", "--per-worker", "20", "--payload",
		"lo-up,sysctl:net.ipv4.ip_forward=1,veth:2,exec:"+forwarding+" && ip link show eth1 >/dev/null", "--json")
	var rep netnsbench.Report
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &rep) != nil || len(rep.Runs) != 1 || rep.Runs[0].Namespaces != 40 || rep.Runs[0].DrainMethod == "" {
		t.Fatalf("churn: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// /sys shows the namespace's own devices only under ip netns exec's
	// remount: the step's view.
	inside := forwarding + ` && test -e /sys/class/net/eth1 && ! test -e /sys/class/net/eth2`
	r = run(t, t.TempDir(), "netns", "create", "--count", "30", "--step", "10", "--payload", "router", "--exec-step", inside, "--json")
	rep = netnsbench.Report{}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &rep) != nil || len(rep.Runs) != 1 {
		t.Fatalf("create: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	c := rep.Runs[0]
	if c.Payload != "router" || c.ExecNS <= 0 || c.ExecPerSec <= 0 || len(c.ExecRate) != 3 || c.ExecRate[2].Created != 30 || len(c.Rate) != 3 || c.DrainMethod == "" {
		t.Errorf("create with an exec step: %+v", c)
	}
	// A step that fails in a namespace fails the run, and still leaves
	// nothing behind.
	state := t.TempDir()
	r = run(t, state, "netns", "create", "--count", "5", "--payload", "lo-up", "--exec-step", "test -e /sys/class/net/eth0")
	if r.code != 1 || !strings.Contains(r.stderr, "exec step in namespace 0") {
		t.Errorf("a failing exec step: exit %d, %s", r.code, r.stderr)
	}
	if left, _ := filepath.Glob(filepath.Join(state, "netns", "*", "*")); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}

// The comparison: direct syscalls against the shell loop, side by
// side: round by round, the order alternating, each run counted, drained
// and measured, and the modes compared. (How devbulk's own CPU compares
// with the kernel's is a measurement for bench, not an assertion: the split
// is unreliable for short phases.)
func TestNetnsChurnCompareExec(t *testing.T) {
	needRoot(t)
	rep := netnsJSON(t, "churn", "--workers", "2", "--per-worker", "100", "--compare", "exec", "--repeat", "2")
	var order []string
	for _, run := range rep.Runs {
		order = append(order, fmt.Sprintf("%d %s", run.Round, run.Mode))
		if run.Namespaces != 200 || run.NetnsPerSec <= 0 || run.DrainMethod == "" || run.KernelNS <= 0 {
			t.Errorf("%s run: %+v", run.Mode, run)
		}
	}
	if got := strings.Join(order, ", "); got != "1 direct, 1 exec, 2 exec, 2 direct" {
		t.Errorf("runs in the order %s, want direct first in round 1 and exec first in round 2", got)
	}
	var phases []string
	for _, c := range rep.Comparisons {
		phases = append(phases, c.Phase)
	}
	if strings.Join(phases, ",") != "churn,drain,setup p50,setup p99" {
		t.Fatalf("comparisons: %+v", rep.Comparisons)
	}
	for _, c := range rep.Comparisons {
		if c.A != "direct" || c.B != "exec" || c.N != 2 || c.Verdict != devbulk.TooFew || c.MedianA <= 0 {
			t.Errorf("comparison %+v: want exec against direct over 2 rounds, too few for a verdict", c)
		}
	}
}

// netnsJSON runs devbulk netns ARGS --json and reads its report.
func netnsJSON(t *testing.T, args ...string) netnsbench.Report {
	t.Helper()
	r := run(t, t.TempDir(), append(append([]string{"netns"}, args...), "--json")...)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var rep netnsbench.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	return rep
}

// Issue 26 (items 3 and 4): CNI's two veth setups side by side in one
// churn — the peer made directly in the parent namespace (veth:1) against
// both ends made inside and the parent's moved out (veth:1:moved) — with
// each run's per-namespace setup times and the payloads compared, churn,
// drain and setup p50 and p99, the order alternating.
func TestNetnsChurnComparePayloads(t *testing.T) {
	needRoot(t)
	needKind(t, "veth")
	rep := netnsJSON(t, "churn", "--workers", "3", "--per-worker", "20", "--payload", "veth:1",
		"--compare", "payload:veth:1:moved", "--repeat", "2")
	checkComparedPayloads(t, &rep, 60, "churn,drain,setup p50,setup p99")
	table := run(t, t.TempDir(), "netns", "churn", "--workers", "1", "--per-worker", "5", "--payload", "veth:1:moved")
	if table.code != 0 || !regexp.MustCompile(`veth:1:moved +\S+ +\d+ +[\d.]+[mµ]?s +[\d.]+[mµ]?s +[\d.]+[mµ]?s `).MatchString(table.stdout) {
		t.Errorf("table: exit %d, no setup times in the run's row\n%s%s", table.code, table.stdout, table.stderr)
	}
}

// The same comparison with every namespace kept (issue 26, item 3): netns
// create runs each payload in runs of its own, released and drained before
// the next, and compares the creation, the exec step, the release, the
// drain and the setup times. Nothing stays mounted.
func TestNetnsCreateComparePayloads(t *testing.T) {
	needRoot(t)
	needKind(t, "veth")
	state := t.TempDir()
	r := run(t, state, "netns", "create", "--count", "30", "--veth", "--compare", "payload:veth:1:moved",
		"--repeat", "2", "--exec-step", "true", "--json")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	var rep netnsbench.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	checkComparedPayloads(t, &rep, 30, "create,exec step,release,drain,setup p50,setup p99")
	for _, run := range rep.Runs {
		if run.Created != 30 || run.ExecDone != 30 || run.ReleaseNS <= 0 || run.DrainMethod == "" || len(run.Rate) == 0 {
			t.Errorf("round %d, %s: created %d, exec step in %d, release %d ns, drain %q, %d rate points",
				run.Round, run.Payload, run.Created, run.ExecDone, run.ReleaseNS, run.DrainMethod, len(run.Rate))
		}
	}
	if n := mountsUnder(t, filepath.Join(state, "netns")); n != 0 {
		t.Errorf("%d mounts left", n)
	}
	// Namespaces given nothing (create's default) are compared as "none".
	table := run(t, state, "netns", "create", "--count", "5", "--compare", "payload:lo-up")
	for _, want := range []string{"creation rate (netns/s over each step, round 1, lo-up)", "lo-up against none, side by side"} {
		if table.code != 0 || !strings.Contains(table.stdout, want) {
			t.Errorf("table: exit %d, no %q\n%s%s", table.code, want, table.stdout, table.stderr)
		}
	}
}

// checkComparedPayloads checks a report of veth:1 against veth:1:moved over
// two rounds: the runs in alternating order, each with the setup times of
// its n namespaces, and the phases compared.
func checkComparedPayloads(t *testing.T, rep *netnsbench.Report, n int, phases string) {
	t.Helper()
	var order []string
	for _, run := range rep.Runs {
		order = append(order, fmt.Sprintf("%d %s", run.Round, run.Payload))
		s := run.Setup
		if run.Mode != "direct" || s == nil || s.Count != n || s.P50NS <= 0 || s.P50NS > s.P99NS || s.P99NS > s.MaxNS || s.MaxNS > run.CreateNS {
			t.Errorf("run %s: mode %s, setup %+v within %d ns", run.Payload, run.Mode, s, run.CreateNS)
		}
	}
	if got := strings.Join(order, ", "); got != "1 veth:1, 1 veth:1:moved, 2 veth:1:moved, 2 veth:1" {
		t.Errorf("runs in the order %s", got)
	}
	var got []string
	for _, c := range rep.Comparisons {
		got = append(got, c.Phase)
		if c.A != "veth:1" || c.B != "veth:1:moved" || c.N != 2 {
			t.Errorf("comparison %+v: want veth:1:moved against veth:1 over 2 rounds", c)
		}
	}
	if strings.Join(got, ",") != phases {
		t.Errorf("compared %v, want %s", got, phases)
	}
}

// startNetnsCreate starts a long `netns create` and waits until it has made
// 100 namespaces; it returns the command and the run's mount directory.
func startNetnsCreate(t *testing.T, state string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(binary(t), "netns", "create", "--count", "20000")
	cmd.Env = append(os.Environ(), "DEVBULK_STATE_DIR="+state)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The bound only catches a hang; a slow machine just waits longer.
	for deadline := time.Now().Add(5 * time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if runs, _ := filepath.Glob(filepath.Join(state, "netns", "*")); len(runs) == 1 {
			if ents, _ := os.ReadDir(runs[0]); len(ents) >= 100 {
				return cmd, runs[0]
			}
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	t.Fatal("netns create did not start")
	return nil, ""
}

// mountsUnder counts the mount points at or below dir.
func mountsUnder(t *testing.T, dir string) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 4 && strings.HasPrefix(f[4], dir) {
			n++
		}
	}
	return n
}

func TestNetnsCreateInterruptAndCleanup(t *testing.T) {
	needRoot(t)
	// Ctrl-C: the namespaces made so far are released before devbulk exits.
	state := t.TempDir()
	cmd, dir := startNetnsCreate(t, state)
	cmd.Process.Signal(syscall.SIGINT)
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 130 {
		t.Errorf("after Ctrl-C: exit %d, want 130", code)
	}
	if n := mountsUnder(t, dir); n != 0 {
		t.Errorf("after Ctrl-C: %d mounts left under %s", n, dir)
	}
	// kill -9: the bind mounts stay; cleanup removes them, and only them.
	state = t.TempDir()
	cmd, dir = startNetnsCreate(t, state)
	cmd.Process.Kill()
	cmd.Wait()
	if n := mountsUnder(t, dir); n < 100 {
		t.Fatalf("after kill -9: %d mounts under %s, want the namespaces left behind", n, dir)
	}
	r := run(t, state, "cleanup")
	if r.code != 0 || !strings.Contains(r.stdout, "netns create run "+dir+": released ") {
		t.Errorf("cleanup: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if n := mountsUnder(t, filepath.Join(state, "netns")); n != 0 {
		t.Errorf("after cleanup: %d mounts left", n)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("after cleanup: %s still there (%v)", dir, err)
	}
}

// Ctrl-C during the drain stops a run of several rounds there: the run
// says it was interrupted, exit 130, and no later run starts.
func TestNetnsCreateInterruptedInTheDrain(t *testing.T) {
	needRoot(t)
	state := t.TempDir()
	cmd, out := start(t, state, "netns", "create", "--count", "5000", "--repeat", "2", "--quiet")
	entries := func() int {
		runs, _ := filepath.Glob(filepath.Join(state, "netns", "*", "ns*"))
		return len(runs)
	}
	made := false
	waitFor(t, "every namespace made, then released", func() bool {
		n := entries()
		made = made || n >= 4000
		return made && n == 0
	})
	cmd.Process.Signal(syscall.SIGINT)
	cmd.Wait()
	rows := regexp.MustCompile(`(?m)^ +\d+ +direct `).FindAllString(out.String(), -1)
	if cmd.ProcessState.ExitCode() != 130 || len(rows) != 1 || !strings.Contains(out.String(), "round 1 direct, none: INTERRUPTED once every namespace was made") {
		t.Errorf("interrupted in the drain: exit %d, %d runs\n%s", cmd.ProcessState.ExitCode(), len(rows), out)
	}
}

func TestNetnsBadInput(t *testing.T) {
	needRoot(t)
	for args, want := range map[string]string{
		"netns churn --workers 0":                               "--workers \"0\" out of range: 1..1024",
		"netns churn --payload wormhole":                        "unknown payload",
		"netns churn --payload devices:vlan:3":                  "not payloads",
		"netns churn --payload devices:ifb:0":                   "COUNT out of range: 1..10000",
		"netns churn --workers 1000 --per-worker 1001":          "1001000 namespaces in all (--workers × --per-worker, or --count) out of range: 1..1000000",
		"netns churn --compare shell":                           "valid are exec and payload:LIST",
		"netns churn --compare payload:wormhole":                "unknown payload item \"wormhole\"",
		"netns churn --payload veth:1 --compare payload:veth:1": "--compare payload:veth:1 is the payload itself",
		"netns churn --payload veth --compare payload:veth:1":   "--compare payload:veth:1 is the payload itself",
		"netns churn --compare payload:":                        "--compare payload: needs a payload list",
		"netns churn --compare exec --payload veth:1:moved":     "--compare exec: payload item veth:1:moved has no shell form",
		"netns churn --payload veth:1:copied":                   "want veth:N or veth:N:moved",
		"netns sequential --count 0":                            "--count \"0\" out of range",
		"netns create --count 0":                                "--count \"0\" out of range",
		"netns create --count 10 --step 11":                     "--step \"11\" out of range: 1..10",
		"netns create --count 200000":                           "over /proc/sys/user/max_net_namespaces",
		"netns create --compare exec":                           "valid is payload:LIST (as payload:veth:1:moved); netns create has no shell form",
		"netns create --veth --compare payload:veth:1":          "--compare payload:veth:1 is the payload itself",
		"netns create --compare payload:veth:0":                 "out of range",
		"netns create --repeat 101":                             "--repeat \"101\" out of range: 1..100",
	} {
		state := t.TempDir()
		r := run(t, state, strings.Fields(args)...)
		if r.code != 2 || !strings.Contains(r.stderr, want) {
			t.Errorf("%s: exit %d, stderr %q; want 2 and %q", args, r.code, r.stderr, want)
		}
		if _, err := os.Stat(filepath.Join(state, "netns")); err == nil {
			t.Errorf("%s: a mount directory was made", args)
		}
	}
}
