// Package history makes the kernel tree the source tests build from
// (issue 48): a throwaway git history of Debian's linux-source-6.1 (apt,
// installed by tests/run-all.sh) with four commits, tagged: pristine (as
// Debian ships it, the synchronize_rcu in xfrm_policy_fini), good (the line
// removed), harmless (a comment added elsewhere), planted (the line back).
// It lives at a fixed place in the user cache, so that devbulk's build
// directory for it is reused and every build after the first is
// incremental. Make is safe between processes: the tests package and
// tests/prebuild (which starts the one cold build early) both call it.
package history

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/devbulk/devbulk/kbuild"
)

// Source is the source apt's linux-source-6.1 installs.
const Source = "/usr/src/linux-source-6.1.tar.xz"

// The one synchronize_rcu() (6.1.192's "xfrm: Wait for RCU readers during
// policy netns exit") the history plants in xfrm_policy_fini: a netns drain
// of 200 namespaces 11× slower with it.
const (
	xfrmFile = "net/xfrm/xfrm_policy.c"
	xfrmLine = "\tsynchronize_rcu();\n"
	xfrmNext = "\n\tWARN_ON(!list_empty(&net->xfrm.policy_all));"
)

// Unavailable says why the history cannot be made and built here (no
// source, no kernel toolchain: tests/run-all.sh installs both), or "".
func Unavailable() string {
	if _, err := os.Stat(Source); err != nil {
		return "Debian's linux-source-6.1 is not installed (tests/run-all.sh installs it): no kernel source to build"
	}
	if err := kbuild.Toolchain(); err != nil {
		return fmt.Sprintf("no kernel toolchain (tests/run-all.sh installs it): %v", err)
	}
	return ""
}

// Planted is the subject of the planted commit.
const Planted = "xfrm: Wait for RCU readers during policy netns exit (planted)"

// Make returns the history's directory, making it first unless a whole
// one is there (its planted tag is the last thing made). Another process
// making it meanwhile is waited for.
func Make() (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, "devbulk-tests", "linux-6.1")
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", err
	}
	lock, err := os.OpenFile(dir+".lock", os.O_CREATE|os.O_RDWR|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return "", err
	}
	defer lock.Close()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		return "", fmt.Errorf("locking %s: %w", lock.Name(), err)
	}
	if exec.Command("git", "-C", dir, "rev-parse", "--verify", "--quiet", "planted").Run() == nil {
		return dir, nil
	}
	return dir, build(dir)
}

func build(dir string) error {
	os.RemoveAll(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	steps := [][]string{
		{"tar", "-xJf", Source, "-C", dir, "--strip-components=1"},
		{"git", "init", "-q"},
		{"git", "add", "-f", "-A"},
		{"git", "commit", "-q", "-m", "linux-source-6.1 as Debian ships it"},
		{"git", "tag", "pristine"},
	}
	if err := runAll(dir, steps); err != nil {
		return err
	}
	b, err := os.ReadFile(filepath.Join(dir, xfrmFile))
	if err != nil {
		return err
	}
	if !strings.Contains(string(b), xfrmLine+xfrmNext) {
		return fmt.Errorf("%s of %s has no synchronize_rcu() before the policy_all check: another version than the history plants into", xfrmFile, Source)
	}
	edit := func(file, from, to, msg, tag string) error {
		b, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, file), []byte(strings.Replace(string(b), from, to, 1)), 0o644); err != nil {
			return err
		}
		return runAll(dir, [][]string{{"git", "commit", "-q", "-a", "-m", msg}, {"git", "tag", tag}})
	}
	if err := edit(xfrmFile, xfrmLine+xfrmNext, xfrmNext, "xfrm: no synchronize_rcu in xfrm_policy_fini", "good"); err != nil {
		return err
	}
	if err := edit("net/core/dev.c", "#include <linux/uaccess.h>\n", "#include <linux/uaccess.h>\n/* harmless */\n", "net: a harmless comment", "harmless"); err != nil {
		return err
	}
	return edit(xfrmFile, xfrmNext, xfrmLine+xfrmNext, Planted, "planted")
}

func runAll(dir string, steps [][]string) error {
	for _, s := range steps {
		cmd := exec.Command(s[0], s[1:]...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=devbulk-tests", "GIT_AUTHOR_EMAIL=t@localhost", "GIT_COMMITTER_NAME=devbulk-tests", "GIT_COMMITTER_EMAIL=t@localhost")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("%s: %w\n%s", strings.Join(s, " "), err, out)
		}
	}
	return nil
}
