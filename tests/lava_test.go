package tests

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/devbulk/devbulk/check"
)

// fleetSuite is small enough for a LAVA job under TCG (9-15 s a job on the
// development machine, 2026-12-05, docs/fleet.md): the
// focus kinds' group deletes and a netns churn, five repetitions each (the
// fewest with which a 10x slowdown is significant: p = 0.008).
const fleetSuite = `{"name": "fleet-test", "scenarios": [
  {"name": "dummy", "vm": true, "repeat": 5, "bench": {"kind": "dummy", "count": 100, "delete": ["group"]}},
  {"name": "vlan", "vm": true, "repeat": 5, "bench": {"kind": "vlan", "count": 100, "delete": ["group"]}},
  {"name": "churn", "repeat": 5, "netns": {"scenario": "churn", "workers": 2, "per_worker": 25}}]}`

// needLAVA skips where LAVA's dispatcher cannot run: tests/run-all.sh
// installs it, and a skip for that reason fails CI.
func needLAVA(t *testing.T) {
	t.Helper()
	needRoot(t)
	needVM(t)
	if _, err := os.Stat("/usr/bin/lava-run"); err != nil {
		t.Skip("lava-run not installed (apt-get install --no-install-recommends lava-dispatcher): the fleet tests cannot run")
	}
}

// lavaJob writes a job with devbulk lava job and runs it with lava-run as
// a fleet would (through devbulk lava run), returning the log's path and
// lava run's output. validate also checks the job with lava-run --validate.
func lavaJob(t *testing.T, dir, name, kernel string, extra ...string) (string, result) {
	t.Helper()
	art := filepath.Join(dir, name)
	job := filepath.Join(dir, name+".yaml")
	args := append([]string{"lava", "job", "--kernel", kernel, "--suite", filepath.Join(dir, "suite.json"), "--artifacts", art, "-q"}, extra...)
	r := run(t, dir, args...)
	if r.code != 0 {
		t.Fatalf("lava job %s: exit %d\n%s", kernel, r.code, r.stderr)
	}
	if err := os.WriteFile(job, []byte(r.stdout), 0o644); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, name+".log")
	r = run(t, dir, "lava", "run", "-q", "--accel", "tcg", "--log", log, job)
	t.Logf("lava run %s:\n%s%s", name, r.stdout, r.stderr)
	return log, r
}

// A job from devbulk lava job validates and runs under LAVA's own
// dispatcher; every scenario is a case with its figure; check --results
// reads the log back, as a table and as a baseline; a baseline ten times
// as fast fails the cases, a kernel without the kinds' modules skips
// them; two kernels' jobs make a two-kernel matrix.
func TestLAVAJobRunsAndReadsBack(t *testing.T) {
	needLAVA(t)
	besideOthers(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "suite.json"), []byte(fleetSuite), 0o644); err != nil {
		t.Fatal(err)
	}

	// The job validates as LAVA reads it.
	art := filepath.Join(dir, "v")
	r := run(t, dir, "lava", "job", "--kernel", "debian:6.1", "--suite", filepath.Join(dir, "suite.json"), "--artifacts", art, "-q")
	if r.code != 0 {
		t.Fatalf("lava job: exit %d\n%s", r.code, r.stderr)
	}
	for _, f := range []string{"vmlinuz", "ramdisk.cpio.gz"} {
		if _, err := os.Stat(filepath.Join(art, f)); err != nil {
			t.Errorf("artifacts: %v", err)
		}
	}
	if !strings.Contains(r.stdout, "url: file://"+art+"/ramdisk.cpio.gz") || !strings.Contains(r.stdout, "device_type: qemu") {
		t.Errorf("job:\n%s", r.stdout)
	}
	job := filepath.Join(dir, "v.yaml")
	os.WriteFile(job, []byte(r.stdout), 0o644)
	device := filepath.Join(dir, "device.yaml")
	os.WriteFile(device, []byte(deviceForValidation()), 0o644)
	id := fmt.Sprint(os.Getpid()*100 + 99) // lava-run leaves /var/lib/lava/dispatcher/tmp/ID behind
	t.Cleanup(func() { os.RemoveAll("/var/lib/lava/dispatcher/tmp/" + id) })
	cmd := exec.Command("/usr/bin/python3", "/usr/bin/lava-run", "--validate", "--device", device, "--job-id", id, "--output-dir", filepath.Join(dir, "out"), job)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), `"case": "validate"`) || strings.Contains(string(out), `"result": "fail"`) {
		t.Fatalf("lava-run --validate: %v\n%s", err, out)
	}

	// The job itself: pass, a case per scenario with its measurement.
	log61, r := lavaJob(t, dir, "k61", "debian:6.1")
	if r.code != 0 {
		t.Fatalf("lava run: exit %d", r.code)
	}
	for _, sc := range []string{"dummy", "vlan", "churn"} {
		if !regexp.MustCompile(`(?m)^` + sc + ` +pass +[0-9.]+ +ns/op$`).MatchString(r.stdout) {
			t.Errorf("no passing case %s with a measurement", sc)
		}
	}
	if !regexp.MustCompile(`(?m)^devbulk.check +pass`).MatchString(r.stdout) || !strings.Contains(r.stdout, "job pass; 15 sample cases") {
		t.Errorf("the check's case, the job's result or the samples are wrong")
	}

	// Read back: the scenarios as for any saved run, and a baseline.
	r = run(t, dir, "check", "--results", log61)
	for _, b := range []string{"Delete/kind=dummy/strategy=group/n=100", "Delete/kind=vlan/strategy=group/n=100", "NetnsChurn/"} {
		if r.code != 0 || !strings.Contains(r.stdout, b) {
			t.Errorf("check --results LOG: exit %d, no %s in\n%s%s", r.code, b, r.stdout, r.stderr)
		}
	}
	base := filepath.Join(dir, "base.json")
	r = run(t, dir, "check", "--results", log61, "--format", "json")
	var doc check.Results
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil || r.code != 0 || len(doc.Scenarios) != 3 || doc.Meta.Label != "debian:6.1" {
		t.Fatalf("check --results LOG --format json: exit %d, %v, %d scenarios, label %q", r.code, err, len(doc.Scenarios), doc.Meta.Label)
	}
	os.WriteFile(base, []byte(r.stdout), 0o644)

	// A baseline ten times as fast: the scenarios' cases fail.
	fast := filepath.Join(dir, "fast.json")
	scaleBaseline(t, base, fast, 0.1)
	_, r = lavaJob(t, dir, "fast", "debian:6.1", "--baseline", fast)
	if r.code != 1 || !regexp.MustCompile(`(?m)^dummy +fail `).MatchString(r.stdout) || !regexp.MustCompile(`(?m)^devbulk.check +fail`).MatchString(r.stdout) {
		t.Errorf("against a baseline ten times as fast: exit %d (want 1), want dummy and the check failed", r.code)
	}

	// A kernel that cannot make the kinds (its image without its modules):
	// their cases skip, the netns case still passes.
	k := vmKernel(t, "debian:6.1")
	_, r = lavaJob(t, dir, "nomods", k.Vmlinuz)
	if r.code != 0 || !regexp.MustCompile(`(?m)^dummy +skip`).MatchString(r.stdout) || !regexp.MustCompile(`(?m)^vlan +skip`).MatchString(r.stdout) ||
		!regexp.MustCompile(`(?m)^churn +pass`).MatchString(r.stdout) {
		t.Errorf("a kernel without the modules: exit %d, want dummy and vlan skipped, churn passed", r.code)
	}

	// Two kernels' jobs, read back together: a matrix.
	log612, r := lavaJob(t, dir, "k612", "debian:6.12")
	if r.code != 0 {
		t.Fatalf("lava run on 6.12: exit %d", r.code)
	}
	r = run(t, dir, "check", "--results", log61, "--results", log612, "--format", "json")
	var m check.Matrix
	if err := json.Unmarshal([]byte(r.stdout), &m); err != nil || len(m.Columns) != 2 {
		t.Fatalf("a matrix of two jobs: exit %d, %v\n%s%s", r.code, err, r.stdout, r.stderr)
	}
	if m.Columns[0].Label != "debian:6.1" || m.Columns[1].Label != "debian:6.12" || m.Columns[1].Results == nil ||
		!strings.HasPrefix(m.Columns[1].Results.Meta.Kernel, "6.12") {
		t.Errorf("matrix columns: %q, %q", m.Columns[0].Label, m.Columns[1].Label)
	}
	r = run(t, dir, "check", "--results", log61, "--results", log612)
	if !strings.Contains(r.stdout, "A  debian:6.1") || !strings.Contains(r.stdout, "B  debian:6.12") {
		t.Errorf("the matrix's table:\n%s", r.stdout)
	}
}

// deviceForValidation is a qemu device as lava-server renders one; only
// --validate reads it here (devbulk lava run writes its own). Fleets' devices
// have KVM; lava-run refuses -enable-kvm where there is no /dev/kvm (some of
// these machines have none), so there the device is rendered without it,
// as a server renders a no_kvm device.
func deviceForValidation() string {
	if _, err := os.Stat("/dev/kvm"); err != nil {
		return strings.Replace(qemuDevice, "-cpu host, -enable-kvm, ", "", 1)
	}
	return qemuDevice
}

const qemuDevice = `constants:
  posix: {lava_test_sh_cmd: /bin/sh, lava_test_results_dir: /lava-%s, lava_test_shell_file: ~/.bashrc}
  shutdown-message: 'The system is going down for reboot NOW'
  kernel-start-message: 'Linux version [0-9]'
  default-shell-prompt: 'lava-test: # '
  spawn_maxread: '4092'
  failure_retry: 1
  boot_retry:
parameters:
  pass:
available_architectures: [amd64, x86_64]
actions:
  deploy:
    connections: {serial: }
    methods:
      image: {parameters: {guest: {size: 512, interface: ide, driveid: lavatest}}}
  boot:
    connections: {serial: }
    methods:
      qemu:
        parameters:
          command: qemu-system-x86_64
          boot_options: {root: /dev/sda1, console: 'ttyS0,115200', boot_order: c}
          options: [-cpu host, -enable-kvm, -machine q35, -nographic, -nic none, -m 1024, -smp 2, -monitor none]
timeouts:
  actions: {lava-test-shell: {minutes: 3}}
  connections: {lava-test-shell: {seconds: 10}}
`

// Bad input to the fleet commands: one line, exit 2, nothing written.
func TestLAVABadInput(t *testing.T) {
	needRoot(t)
	dir := t.TempDir()
	notDevbulk := filepath.Join(dir, "other.yaml")
	os.WriteFile(notDevbulk, []byte("device_type: qemu\njob_name: someone else's\nactions: []\n"), 0o644)
	noCases := filepath.Join(dir, "nocases.log")
	os.WriteFile(noCases, []byte(`{"dt": "2026-12-05T17:14:34.962255", "lvl": "results", "msg": {"case": "job", "definition": "lava", "result": "pass"}}`+"\n"), 0o644)
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o644)
	unwritable := filepath.Join(file, "artifacts")
	used := filepath.Join(dir, "used") // another job's artifacts
	os.MkdirAll(used, 0o755)
	os.WriteFile(filepath.Join(used, "vmlinuz"), []byte("someone's"), 0o644)
	log := "../lava/testdata/lava-run.log"
	svg := filepath.Join(dir, "x.svg")
	baseline := filepath.Join(dir, "base.json") // a good one: the log's document
	r := run(t, dir, "check", "--results", log, "--format", "json")
	if r.code != 0 {
		t.Fatalf("check --results %s --format json: exit %d: %s", log, r.code, r.stderr)
	}
	os.WriteFile(baseline, []byte(r.stdout), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"lava", "run", notDevbulk}, "not a job devbulk lava job wrote"},
		{[]string{"lava", "run", filepath.Join(dir, "missing.yaml")}, "no such file"},
		{[]string{"check", "--results", noCases}, "no devbulk test cases"},
		{[]string{"check", "--results", notDevbulk}, "no devbulk test cases"},
		{[]string{"lava", "job", "--kernel", "debian:5.10", "--artifacts", filepath.Join(dir, "a")}, "unknown Debian kernel"},
		{[]string{"lava", "job", "--kernel", "debian", "--artifacts", unwritable}, "--artifacts " + unwritable + ": cannot write there"},
		{[]string{"lava", "job", "--kernel", "debian", "--artifacts", filepath.Join(dir, "a"), "--threshold", "5000%"}, "out of range"},
		{[]string{"lava", "job", "--kernel", "debian", "--artifacts", filepath.Join(dir, "a"), "--url-base", "ftp:x"}, "--url-base"},
		{[]string{"lava", "job", "--kernel", "debian", "--artifacts", filepath.Join(dir, "a"), "--baseline", notDevbulk}, "--baseline"},
		{[]string{"check", "--format", "lava", "--vm-kernel", "debian", "--vm-kernel", "debian:6.12"}, "--format lava"},
		{[]string{"lava", "run", dir}, "is a directory"},
		{[]string{"lava", "job", "--kernel", "debian", "--artifacts", used}, "already holds vmlinuz"},
		{[]string{"check", "--results", log, "--svg", svg}, "--svg draws a comparison"},
		{[]string{"check", "--results", log, "--rounds", "3"}, "--rounds"},
		{[]string{"check", "--results", log, "--label", "x"}, "--label"},
		{[]string{"check", "--results", "/dev/zero"}, "larger than 256 MiB"},
		{[]string{"check", "--results", log, "--results", log, "--baseline", baseline}, "--baseline and several --results"},
	} {
		r := run(t, dir, c.args...)
		if r.code != 2 || !strings.Contains(r.stderr, c.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || r.stdout != "" {
			t.Errorf("devbulk %s: exit %d, stdout %q, stderr %q; want exit 2, one line with %q", strings.Join(c.args, " "), r.code, r.stdout, r.stderr, c.want)
		}
	}
	for _, f := range []string{filepath.Join(dir, "a"), svg} {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("%s was made for bad input", f)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(used, "vmlinuz")); string(b) != "someone's" {
		t.Error("another job's vmlinuz was replaced")
	}
}

// devbulk lava run killed with SIGKILL while the guest runs: lava-run and
// its qemu die with it, and devbulk cleanup removes the work directory and
// the job directory lava-run left in /var/lib/lava/dispatcher/tmp.
func TestLAVARunKilledLeavesNothing(t *testing.T) {
	needLAVA(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "suite.json"), []byte(fleetSuite), 0o644)
	r := run(t, dir, "lava", "job", "--kernel", "debian:6.1", "--suite", filepath.Join(dir, "suite.json"), "--artifacts", filepath.Join(dir, "a"), "-q")
	if r.code != 0 {
		t.Fatalf("lava job: exit %d\n%s", r.code, r.stderr)
	}
	job := filepath.Join(dir, "job.yaml")
	os.WriteFile(job, []byte(r.stdout), 0o644)
	tmp := t.TempDir() // devbulk's work directory goes here, apart from other tests'
	cmd := exec.Command(binary(t), "lava", "run", "-q", "--accel", "tcg", job)
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp, "DEVBULK_STATE_DIR="+dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The guest is up once lava-run's job directory holds the kernel.
	var jobDir string
	deadline := time.Now().Add(2 * time.Minute)
	for jobDir == "" && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
		ids, _ := filepath.Glob(filepath.Join(tmp, "devbulk-lava-*", "job-id"))
		if len(ids) == 1 {
			id, _ := os.ReadFile(ids[0])
			if qemuRunning(string(id)) {
				jobDir = filepath.Join("/var/lib/lava/dispatcher/tmp", string(id))
			}
		}
	}
	if jobDir == "" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatal("no guest of devbulk lava run within 2 minutes")
	}
	cmd.Process.Kill()
	cmd.Wait()
	id := filepath.Base(jobDir)
	for deadline := time.Now().Add(20 * time.Second); qemuRunning(id) && time.Now().Before(deadline); {
		time.Sleep(200 * time.Millisecond)
	}
	if qemuRunning(id) {
		t.Errorf("lava-run or its qemu outlived devbulk")
	}
	left, _ := filepath.Glob(filepath.Join(tmp, "devbulk-lava-*"))
	if len(left) != 1 {
		t.Fatalf("work directories after kill -9: %v", left)
	}
	c := exec.Command(binary(t), "cleanup")
	c.Env = cmd.Env
	out, err := c.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "lava run work directory "+left[0]) {
		t.Errorf("cleanup: %v\n%s", err, out)
	}
	for _, d := range []string{left[0], jobDir} {
		if _, err := os.Stat(d); err == nil {
			t.Errorf("%s is still there after cleanup", d)
		}
	}
}

// qemuRunning reports whether lava-run of job id, or a qemu booting from
// its job directory, runs.
func qemuRunning(id string) bool {
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, _ := os.ReadFile(p)
		cmdline := strings.ReplaceAll(string(b), "\x00", " ")
		if strings.Contains(cmdline, "qemu-system") && strings.Contains(cmdline, "/var/lib/lava/dispatcher/tmp/"+id+"/") {
			return true
		}
	}
	return false
}
