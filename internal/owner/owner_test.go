package owner

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Liveness is pid, start time and boot id together: not the name of the
// binary, and not the pid alone.
func TestAliveNeedsPidStartAndBoot(t *testing.T) {
	self := Self()
	if !self.Alive() || self.Start == 0 {
		t.Fatalf("Self() = %+v is not alive", self)
	}
	// A process of any name is alive under its own identity (a renamed
	// devbulk binary keeps its runs).
	cmd, start := sleeper(t)
	other := Owner{PID: cmd.Process.Pid, Start: start, BootID: self.BootID}
	if !other.Alive() {
		t.Errorf("running sleep %+v reported dead", other)
	}
	for name, o := range map[string]Owner{
		"recycled pid (other start time)": {PID: self.PID, Start: self.Start + 1, BootID: self.BootID},
		"another boot":                    {PID: self.PID, Start: self.Start, BootID: "00000000-0000-0000-0000-000000000000"},
		"no such pid":                     {PID: 1 << 30, Start: self.Start, BootID: self.BootID},
		"zero":                            {},
	} {
		if o.Alive() {
			t.Errorf("%s: %+v reported alive", name, o)
		}
	}
}

func TestParseStartSkipsTheCommandName(t *testing.T) {
	stat := "4242 (dev bulk) (x)) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 987654 1000 10"
	got, err := parseStart([]byte(stat))
	if err != nil || got != 987654 {
		t.Errorf("parseStart = %d, %v; want 987654", got, err)
	}
	if _, err := parseStart([]byte("4242 (x) S 1 2")); err == nil {
		t.Error("a short stat line parsed")
	}
}

// Write never writes through a planted symlink or over an existing file.
func TestWriteRefusesSymlinksAndExistingFiles(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "owner")
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	if err := Write(link); err == nil {
		t.Error("Write followed a symlink")
	}
	if err := Write(victim); err == nil {
		t.Error("Write overwrote an existing file")
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Errorf("victim now holds %q", b)
	}
	if _, err := Read(link); err == nil {
		t.Error("Read followed a symlink")
	}
	ok := filepath.Join(dir, "real")
	if err := Write(ok); err != nil {
		t.Fatal(err)
	}
	if o, err := Read(ok); err != nil || o != Self() {
		t.Errorf("Read = %+v, %v; want %+v", o, err, Self())
	}
}

// Stop kills the process it names and returns once it has exited, zombie
// or not; an Owner whose pid now belongs to another process is left alone.
func TestStopKillsOnlyTheOwner(t *testing.T) {
	cmd, start := sleeper(t)
	self := Self()
	impostor := Owner{PID: cmd.Process.Pid, Start: start + 1, BootID: self.BootID}
	if err := impostor.Stop(time.Second); err != nil || !(Owner{PID: cmd.Process.Pid, Start: start, BootID: self.BootID}).Alive() {
		t.Fatalf("Stop of an owner whose start time differs: %v, and the process is gone", err)
	}
	o := Owner{PID: cmd.Process.Pid, Start: start, BootID: self.BootID}
	if err := o.Stop(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	// Not reaped yet: a zombie, which is not alive.
	if o.Alive() {
		t.Error("a killed, unreaped process is reported alive")
	}
	if err := cmd.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Errorf("sleep ended with %v, want killed", err)
	}
}

// sleeper starts a process that runs for a while and returns it with its
// start time.
func sleeper(t *testing.T) (*exec.Cmd, uint64) {
	t.Helper()
	return started(t, exec.Command("sleep", "30"))
}

// started starts cmd, killed at the test's end, and returns it with its
// start time.
func started(t *testing.T, cmd *exec.Cmd) (*exec.Cmd, uint64) {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	start, err := startTime(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	return cmd, start
}

// A killed process whose main thread is a zombie while another thread
// still runs (finishing a netlink batch) has not exited.
func TestExitedNeedsEveryThreadGone(t *testing.T) {
	line := func(state, threads string) []byte {
		return []byte("4242 (devbulk) " + state + " 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 " + threads + " 0 987654 1000 10")
	}
	for _, c := range []struct {
		state, threads string
		want           bool
	}{{"Z", "1", true}, {"X", "1", true}, {"Z", "2", false}, {"S", "1", false}, {"R", "3", false}} {
		if got := exited(line(c.state, c.threads)); got != c.want {
			t.Errorf("state %s with %s threads: exited %v, want %v", c.state, c.threads, got, c.want)
		}
	}
}

// mainExitsEnv makes the test binary a process whose main thread exits
// while another thread runs on for a moment, as a killed devbulk's does
// while a thread finishes a request in the kernel.
const mainExitsEnv = "OWNER_TEST_MAIN_EXITS"

func init() {
	if os.Getenv(mainExitsEnv) == "" {
		return
	}
	runtime.LockOSThread() // in init: the main goroutine keeps the main thread
	go func() {
		os.Stdin.Read(make([]byte, 1)) // until the test closes it
		os.Exit(0)
	}()
	unix.RawSyscall(unix.SYS_EXIT, 0, 0, 0) // this thread only
}

// A process whose main thread exited while another runs on is dying:
// alive, not to be touched, and Wait returns once every thread is gone.
func TestDyingAndWait(t *testing.T) {
	helper := exec.Command(os.Args[0], "-test.run=^$")
	helper.Env = append(os.Environ(), mainExitsEnv+"=1")
	stdin, err := helper.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd, start := started(t, helper)
	o := Owner{PID: cmd.Process.Pid, Start: start, BootID: Self().BootID}
	for deadline := time.Now().Add(30 * time.Second); !o.Dying() && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if !o.Dying() || !o.Alive() {
		t.Fatalf("main thread gone, another running: dying %v, alive %v", o.Dying(), o.Alive())
	}
	if err := o.Wait(100 * time.Millisecond); err == nil {
		t.Fatal("Wait returned while a thread of the process still ran")
	}
	stdin.Close() // the other thread ends the process
	if err := o.Wait(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	if o.Alive() || o.Dying() {
		t.Errorf("after Wait: alive %v, dying %v", o.Alive(), o.Dying())
	}
	if err := (Owner{PID: 1, Start: 1, BootID: o.BootID}).Wait(time.Millisecond); err != nil {
		t.Errorf("Wait for a process that is not the owner (pid 1, another start): %v", err)
	}
}
