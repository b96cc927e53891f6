package tests

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/devbulk/devbulk/devices"
	"github.com/devbulk/devbulk/netnsbench"
)

// The tarball a fleet overlays (kselftest/tarball.sh, without a kernel
// tree) has make install's layout, and its own run_kselftest.sh runs the
// collection with the devbulk inside it.
func TestKselftestTarball(t *testing.T) {
	needKind(t, "ifb")
	src := kselftestRunner(t)
	dir := t.TempDir()
	static := staticBinary(t, "../cmd/devbulk", false)
	tarball := filepath.Join(dir, "kselftest-devbulk.tar.gz")
	if out, err := exec.Command("../kselftest/tarball.sh", "-b", static, "-o", tarball, "-r", src).CombinedOutput(); err != nil {
		t.Fatalf("tarball.sh: %v\n%s", err, out)
	}
	out, err := exec.Command("tar", "-tzf", tarball).Output()
	if err != nil {
		t.Fatal(err)
	}
	var entries []string
	for _, e := range strings.Fields(string(out)) {
		entries = append(entries, strings.TrimPrefix(e, "./"))
	}
	sort.Strings(entries)
	for _, want := range []string{"run_kselftest.sh", "kselftest-list.txt", "kselftest/runner.sh", "devbulk/devbulk", "devbulk/devbulk_check.sh", "devbulk/config", "devbulk/settings"} {
		if i := sort.SearchStrings(entries, want); i == len(entries) || entries[i] != want {
			t.Errorf("the tarball lacks %s: %v", want, entries)
		}
	}
	root := filepath.Join(dir, "opt-kselftests") // where tuxrun unpacks it
	os.MkdirAll(root, 0o755)
	if out, err := exec.Command("tar", "-xzf", tarball, "-C", root).CombinedOutput(); err != nil {
		t.Fatalf("tar -x: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "kselftest-list.txt")); string(b) != "devbulk:devbulk_check.sh\n" {
		t.Errorf("kselftest-list.txt: %q", b)
	}
	suite := filepath.Join(dir, "suite.json")
	os.WriteFile(suite, []byte(`{"name": "ksft", "scenarios": [{"name": "ifb", "bench": {"kind": "ifb", "count": 100, "delete": ["group"]}}]}`), 0o644)
	cmd := exec.Command("./run_kselftest.sh", "-c", "devbulk")
	cmd.Dir = root
	// No DEVBULK: the wrapper takes the devbulk beside it.
	cmd.Env = append(os.Environ(), "DEVBULK_SUITE="+suite, "DEVBULK_STATE_DIR="+filepath.Join(dir, "state"))
	b, err := cmd.CombinedOutput()
	if !strings.Contains(string(b), "\nok 1 selftests: devbulk: devbulk_check.sh\n") || !strings.Contains(string(b), "# ok 1 ifb") {
		t.Errorf("run_kselftest.sh from the tarball: %v\n%s", err, b)
	}

	// A dynamically linked devbulk is refused: a fleet's root filesystem
	// may not have its libraries. (The tests' devbulk is static, as the
	// README builds it: ls stands in for a dynamic one.)
	dynamic, err := exec.LookPath("ls")
	if err != nil {
		t.Fatal(err)
	}
	r, err := exec.Command("../kselftest/tarball.sh", "-b", dynamic, "-o", filepath.Join(dir, "dyn.tar.gz"), "-r", src).CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(r), "dynamically linked") {
		t.Errorf("a dynamic devbulk: %v\n%s", err, r)
	}
}

// The collection's config fragment names what every kind and payload
// needs: each kind's Kconfig symbol, IPVS's, and the tracers --profile
// and --trace-rcu use.
func TestKselftestConfigCoversTheSuite(t *testing.T) {
	f, err := os.Open("../kselftest/config")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	have := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if sym, val, ok := strings.Cut(sc.Text(), "="); ok && (val == "y" || val == "m") {
			have[sym] = true
		}
	}
	want := []string{"CONFIG_NET_NS", "CONFIG_FUNCTION_GRAPH_TRACER", "CONFIG_KPROBE_EVENTS", "CONFIG_HIST_TRIGGERS", "CONFIG_SYNTH_EVENTS"}
	for _, k := range devices.All() {
		want = append(want, k.Config)
	}
	for _, m := range netnsbench.IPVSModules { // ip_vs_rr is CONFIG_IP_VS_RR
		want = append(want, "CONFIG_"+strings.ToUpper(m))
	}
	for _, sym := range want {
		if !have[sym] {
			t.Errorf("kselftest/config lacks %s", sym)
		}
	}
}
