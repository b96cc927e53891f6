package kbuild

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fakeTree is a git repository holding what prepare takes for a kernel
// tree (no kernel: prepare does not build), with two commits, tagged one
// and two, and a linked work tree of its own at wt.
func fakeTree(t *testing.T) (tree, wt string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	tree = filepath.Join(t.TempDir(), "linux")
	for _, f := range []string{"Makefile", "Kconfig", "arch/x86/Makefile", "scripts/kconfig/merge_config.sh", "net/a.c"} {
		os.MkdirAll(filepath.Join(tree, filepath.Dir(f)), 0o755)
		os.WriteFile(filepath.Join(tree, f), []byte(f+"\n"), 0o644)
	}
	os.WriteFile(filepath.Join(tree, ".gitignore"), []byte("/*\n"), 0o644) // as Debian's source
	g := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-C", tree, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	g("init", "-q")
	g("add", "-f", "-A")
	g("commit", "-q", "-m", "one")
	g("tag", "one")
	os.WriteFile(filepath.Join(tree, "net/a.c"), []byte("changed\n"), 0o644)
	g("commit", "-q", "-a", "-m", "two")
	g("tag", "two")
	wt = filepath.Join(filepath.Dir(tree), "wt")
	g("worktree", "add", "-q", "--detach", wt, "one")
	return tree, wt
}

// state is what devbulk must never change in the user's repository: HEADs
// and status (ignored files too) of the tree and its linked work tree.
func state(t *testing.T, dirs ...string) string {
	var b strings.Builder
	for _, d := range dirs {
		for _, args := range [][]string{{"rev-parse", "HEAD"}, {"status", "--porcelain", "--ignored"}, {"stash", "list"}} {
			cmd := exec.Command("git", append([]string{"-C", d}, args...)...)
			cmd.Env = cleanEnv()
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("git %v: %v", args, err)
			}
			b.Write(out)
		}
	}
	return b.String()
}

// prepare reads the user's tree and writes only devbulk's: at a revision,
// a revert and a patch applied; the tree as it is, tracked files its
// .gitignore matches included; and all that with GIT_DIR set to the
// user's linked work tree, as git bisect run sets it there, and
// GIT_INDEX_FILE to the user's index.
func TestPrepareWritesOnlyDevbulks(t *testing.T) {
	tree, wt := fakeTree(t)
	patch := filepath.Join(t.TempDir(), "p.patch")
	os.WriteFile(patch, []byte("--- a/net/a.c\n+++ b/net/a.c\n@@ -1 +1 @@\n-changed\n+patched\n"), 0o644)
	gitDir, _ := exec.Command("git", "-C", wt, "rev-parse", "--absolute-git-dir").Output()
	t.Setenv("GIT_DIR", strings.TrimSpace(string(gitDir)))
	t.Setenv("GIT_INDEX_FILE", filepath.Join(tree, ".git", "index")) // the user's index, which add -A must not write
	before := state(t, tree, wt)
	cache := t.TempDir()
	ctx := context.Background()
	for spec, want := range map[string]string{
		"src:" + tree + "@two+revert:two": "net/a.c\n",
		"src:" + tree + "@two+" + patch:   "patched\n",
		"src:" + tree:                     "changed\n",
		"src:" + wt:                       "net/a.c\n",
	} {
		s, err := Parse(spec)
		if err != nil {
			t.Fatal(err)
		}
		src, err := prepare(ctx, cache, s)
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		if b, _ := os.ReadFile(filepath.Join(src.work, "net/a.c")); string(b) != want {
			t.Errorf("%s: devbulk's work tree holds net/a.c %q, want %q", spec, b, want)
		}
		if _, err := os.Stat(filepath.Join(src.work, "Makefile")); err != nil {
			t.Errorf("%s: the tracked Makefile (which .gitignore matches) is not in devbulk's tree", spec)
		}
	}
	if after := state(t, tree, wt); after != before {
		t.Errorf("the user's repository changed:\nbefore %s\nafter %s", before, after)
	}
	s, _ := Parse("src:" + tree + "@one+" + patch)
	if _, err := prepare(ctx, cache, s); !errors.Is(err, ErrStep) {
		t.Errorf("a patch that does not apply: %v, want ErrStep", err)
	}
}
