package tests

// Issue 22's progress and interruptions (items 8 and 9): every long phase
// shows live progress on a terminal, and an interrupted run says so and
// counts what was really done.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

// onTerminal runs devbulk under script(1), so that its stderr is a
// terminal, and returns what the terminal got.
func onTerminal(t *testing.T, state string, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath("script"); err != nil {
		t.Skip("script(1) not installed (bsdutils)")
	}
	tty := filepath.Join(t.TempDir(), "tty")
	cmd := fmt.Sprintf("DEVBULK_STATE_DIR=%s %s %s >/dev/null", state, binary(t), strings.Join(args, " "))
	if b, err := exec.Command("script", "-q", "-e", "-c", cmd, tty).CombinedOutput(); err != nil {
		t.Fatalf("script -c %q: %v\n%s", cmd, err, b)
	}
	b, _ := os.ReadFile(tty)
	return string(b)
}

// Item 8: create and a one-by-one delete show a bar with the count and
// rate; so do netns sequential, the exec step of netns create, and the
// kernel's drain of a churn's namespaces.
func TestProgressOfEveryLongPhase(t *testing.T) {
	needKind(t, "ifb")
	state := t.TempDir()
	ns, other := namedNetns(t), namedNetns(t)
	if r := run(t, state, "create", "--netns", other, "--kind", "ifb", "--count", "300"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"create", "--netns", ns, "--kind", "ifb", "--count", "5000"}, "create ifb"},
		{[]string{"delete", "--netns", other, "--strategy", "serial"}, "delete (serial)"},
		{[]string{"netns", "create", "--count", "20", "--exec-step", "'sleep 0.1'"}, "exec step"},
		{[]string{"netns", "sequential", "--count", "3000"}, "sequential"},
		{[]string{"netns", "churn", "--workers", "2", "--per-worker", "3000"}, "drain direct"},
	} {
		tty := onTerminal(t, state, c.args...)
		if !strings.Contains(tty, "devbulk: "+c.want) || !regexp.MustCompile(`\(\d+/\d+, \d+ it/s`).MatchString(tty) {
			t.Errorf("%v: no progress bar %q with a count and rate; the terminal got:\n%q", c.args, c.want, tty)
		}
	}
}

// Item 9: an interrupted create says what it removed again; an
// interrupted churn and exec step say so and count what was done.
func TestInterruptedRunsSaySo(t *testing.T) {
	needKind(t, "ifb")
	state := t.TempDir()
	ns := namedNetns(t)
	var stderr strings.Builder
	cmd := exec.Command(binary(t), "create", "--netns", ns, "--kind", "ifb", "--count", "30000", "--strategy", "serial")
	cmd.Env, cmd.Stderr = append(os.Environ(), "DEVBULK_STATE_DIR="+state), &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "dbk100 created", func() bool { return linkNames(t, ns)["dbk100"] })
	cmd.Process.Signal(syscall.SIGINT)
	cmd.Wait()
	// Issue 44, item 8: one "interrupted", and no lower devices an ifb has none of.
	if !regexp.MustCompile(`^devbulk: interrupted during the create: the \d+ ifb links made by then were deleted again, nothing is left\n$`).MatchString(stderr.String()) {
		t.Errorf("interrupted create said %q", stderr.String())
	}

	steps := filepath.Join(t.TempDir(), "steps")
	svg := filepath.Join(t.TempDir(), "churn.svg")
	churnErr := ""
	for _, c := range []struct {
		args []string
		want *regexp.Regexp
	}{
		{[]string{"netns", "churn", "--workers", "1", "--per-worker", "100000", "--svg", svg}, regexp.MustCompile(`INTERRUPTED after \d+ of 100000 namespaces`)},
		{[]string{"netns", "create", "--count", "200", "--exec-step", "echo >> " + steps + "; sleep 0.05"}, regexp.MustCompile(`exec step, .*: \d+ of 200 namespaces in`)},
	} {
		cmd, stdout := start(t, state, c.args...)
		if c.args[1] == "create" {
			waitFor(t, "the exec step", func() bool { b, _ := os.ReadFile(steps); return len(b) > 3 })
		} else {
			waitFor(t, "namespaces made", func() bool { return holdsNetns(cmd.Process.Pid) })
		}
		cmd.Process.Signal(syscall.SIGINT)
		cmd.Wait()
		if !c.want.MatchString(stdout.String()) {
			t.Errorf("%v interrupted printed %q", c.args, stdout.String())
		}
		if c.args[1] == "churn" {
			churnErr = cmd.Stderr.(*strings.Builder).String()
		}
	}
	// The interrupted churn's chart is drawn too, of what it did; when it
	// stopped before its first sample there is nothing to draw, and the
	// error says so rather than the file just missing.
	if b, err := os.ReadFile(svg); (err != nil || !strings.Contains(string(b), "<svg")) && !strings.Contains(churnErr, "--svg: the netns report has no backlog series: its runs stopped before their first sample") {
		t.Errorf("the interrupted churn's --svg: %v, %d bytes; stderr %q", err, len(b), churnErr)
	}
}

// Item 13: plot on a terminal writes RESULT.svg beside, and says so,
// rather than half a megabyte of SVG to the screen.
func TestPlotOnATerminalWritesAFile(t *testing.T) {
	if _, err := exec.LookPath("script"); err != nil {
		t.Skip("script(1) not installed (bsdutils)")
	}
	dir := t.TempDir()
	doc, err := os.ReadFile("../charts/testdata/bench.json")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "big.json"), doc, 0o600)
	tty := filepath.Join(dir, "tty")
	cmd := fmt.Sprintf("cd %s && %s plot big.json", dir, binary(t))
	if b, err := exec.Command("script", "-q", "-e", "-c", cmd, tty).CombinedOutput(); err != nil {
		t.Fatalf("script -c %q: %v\n%s", cmd, err, b)
	}
	b, _ := os.ReadFile(tty)
	if !strings.Contains(string(b), "wrote big.svg") || strings.Contains(string(b), "<svg") {
		t.Errorf("plot on a terminal printed %q", b)
	}
	if st, err := os.Stat(filepath.Join(dir, "big.svg")); err != nil || st.Size() == 0 {
		t.Errorf("no big.svg: %v", err)
	}
}

// Item 15: the bash completion script completes commands and flags from
// devbulk itself.
func TestBashCompletion(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	dir := filepath.Dir(binary(t))
	for line, want := range map[string]string{
		"devbulk be":           "bench",
		"devbulk bench --cou":  "--count",
		"devbulk netns ch":     "churn",
		"devbulk delete --for": "--force --forget-renamed",
	} {
		script := fmt.Sprintf(`PATH=%s:$PATH; source ../completions/devbulk.bash; COMP_WORDS=(%s); COMP_CWORD=%d; _devbulk; echo "${COMPREPLY[*]}"`,
			dir, line, len(strings.Fields(line))-1)
		out, err := exec.Command("bash", "-c", script).CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != want {
			t.Errorf("%q completes to %q (%v), want %q", line, out, err, want)
		}
	}
}
