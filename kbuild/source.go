package kbuild

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/devbulk/devbulk/internal/child"
)

// source is a spec's source prepared in devbulk's work tree.
type source struct {
	id     string // the repository's: names its work tree and build directories
	repo   string // devbulk's bare repository
	work   string // its work tree, at the prepared commit
	user   string // the user's git work tree, or "" for a directory or tarball
	commit string // the prepared commit: the revision, steps applied
	tree   string // its tree: the source's identity
}

// prepare readies spec's source in devbulk's work tree under dir: the
// revision (or the tree as it is), then each step. Nothing is written into
// the user's tree or repository.
func prepare(ctx context.Context, dir string, s *Spec) (*source, error) {
	src := &source{}
	var err error
	switch path := s.Path; {
	case !isDir(path):
		err = src.fromTarball(ctx, dir, path)
	case isKernelTree(path) != nil:
		return nil, isKernelTree(path)
	default:
		if top, gerr := git(ctx, path, "rev-parse", "--show-toplevel"); gerr == nil && sameFile(top, path) {
			src.user = path
		}
		if s.Rev != "" && src.user == "" {
			return nil, bad("%s@%s: %s is not a git work tree, so it has no revisions", s.Path, s.Rev, s.Path)
		}
		src.id = "dir-" + digest([]byte(path))[:12]
		if err = src.open(ctx, dir); err != nil {
			return nil, err
		}
		if s.Rev != "" {
			src.commit, err = src.resolve(ctx, s.Rev)
		} else {
			src.commit, err = src.importTree(ctx, path)
		}
	}
	if err != nil {
		return nil, err
	}
	if err := src.checkout(ctx); err != nil {
		return nil, err
	}
	for _, st := range s.Steps {
		if err := src.apply(ctx, st); err != nil {
			return nil, err
		}
	}
	src.tree, err = src.inWork(ctx, "rev-parse", "HEAD^{tree}")
	return src, err
}

// open makes (once) devbulk's bare repository for the source: for a git
// tree, one that borrows the tree's objects (alternates) and so reads its
// every commit without copying or writing them.
func (src *source) open(ctx context.Context, dir string) error {
	var objects string
	if src.user != "" {
		common, err := git(ctx, src.user, "rev-parse", "--path-format=absolute", "--git-common-dir")
		if err != nil {
			return err
		}
		objects = filepath.Join(common, "objects")
		src.id = "git-" + digest([]byte(common))[:12]
	}
	src.repo = filepath.Join(dir, "src", src.id+".git")
	src.work = filepath.Join(dir, "work", src.id)
	if isDir(src.repo) {
		return nil
	}
	part := src.repo + ".part"
	os.RemoveAll(part)
	if _, err := git(ctx, "", "init", "-q", "--bare", part); err != nil {
		return err
	}
	if objects != "" {
		if err := os.WriteFile(filepath.Join(part, "objects", "info", "alternates"), []byte(objects+"\n"), 0o644); err != nil {
			return err
		}
	}
	return os.Rename(part, src.repo)
}

// resolve is the commit rev names in the user's repository, read there.
func (src *source) resolve(ctx context.Context, rev string) (string, error) {
	c, err := git(ctx, src.user, "rev-parse", "--verify", "--quiet", "--end-of-options", rev+"^{commit}")
	if err != nil || c == "" {
		return "", bad("revision %s does not exist in %s", rev, src.user)
	}
	return c, nil
}

// importTree records the tree at path as it is (a git tree's uncommitted
// changes included) as a commit of devbulk's repository, through an index
// of devbulk's: the files are read, nothing is written there.
//
// A git tree's index of devbulk's starts from its HEAD (so that tracked
// files its .gitignore matches stay: Debian's source ignores its own top
// level), moved on from the HEAD it last held when that changed (git
// bisect's checkouts), which keeps what it knows of unchanged files and
// re-reads only the rest.
func (src *source) importTree(ctx context.Context, path string) (string, error) {
	g := []string{"--git-dir=" + src.repo, "--work-tree=" + path}
	var head string
	if src.user != "" {
		head, _ = git(ctx, src.user, "rev-parse", "--verify", "--quiet", "HEAD")
	}
	if head != "" {
		seed := filepath.Join(src.repo, "devbulk-seed")
		last, _ := os.ReadFile(seed)
		if l := strings.TrimSpace(string(last)); l != head {
			moved := l != ""
			if moved {
				_, err := git(ctx, "", append(g, "read-tree", "-m", l, head)...)
				moved = err == nil
			}
			if !moved {
				if _, err := git(ctx, "", append(g, "read-tree", head)...); err != nil {
					return "", err
				}
			}
			if err := os.WriteFile(seed, []byte(head+"\n"), 0o644); err != nil {
				return "", err
			}
		}
	}
	add := append(g, "add", "-A")
	if src.user == "" {
		add = append(add, "-f") // Debian's source ignores its own top level (.gitignore: /*)
	}
	if _, err := git(ctx, "", add...); err != nil {
		return "", err
	}
	tree, err := git(ctx, "", append(g, "write-tree")...)
	if err != nil {
		return "", err
	}
	args := append(g, "commit-tree", tree, "-m", "devbulk: the tree at "+path)
	if head != "" {
		args = append(args, "-p", head)
	}
	return git(ctx, "", args...)
}

// checkout puts devbulk's work tree at the commit, touching only the files
// that differ (make rebuilds what they feed).
//
// It runs under the cache's lock: a lock file git left in devbulk's
// repository is a killed devbulk's, and removed; a work tree that is not
// whole (no .git: git would look above it) is made again.
func (src *source) checkout(ctx context.Context) error {
	removeStaleLocks(src.repo)
	wt := []string{"--git-dir=" + src.workGit(), "--work-tree=" + src.work}
	if _, err := os.Stat(filepath.Join(src.work, ".git")); err == nil {
		if _, err := git(ctx, "", append(wt, "checkout", "-q", "--detach", "-f", src.commit)...); err == nil {
			_, err := git(ctx, "", append(wt, "clean", "-q", "-f", "-d", "-x")...)
			return err
		}
	}
	os.RemoveAll(src.work)
	git(ctx, "", "--git-dir="+src.repo, "worktree", "prune")
	_, err := git(ctx, "", "--git-dir="+src.repo, "worktree", "add", "-q", "--detach", "-f", src.work, src.commit)
	return err
}

// workGit is the git directory of devbulk's work tree (a linked work tree
// of its repository), named explicitly on every call there.
func (src *source) workGit() string {
	return filepath.Join(src.repo, "worktrees", filepath.Base(src.work))
}

// inWork runs git in devbulk's work tree.
func (src *source) inWork(ctx context.Context, args ...string) (string, error) {
	return git(ctx, src.work, append([]string{"--git-dir=" + src.workGit(), "--work-tree=" + src.work}, args...)...)
}

// removeStaleLocks removes the lock files a killed git left in devbulk's
// repository (index.lock, HEAD.lock, in it and its work trees'
// directories): only a devbulk holding the cache's lock runs git there.
func removeStaleLocks(repo string) {
	filepath.WalkDir(repo, func(path string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() && d.Name() == "objects" {
			return filepath.SkipDir
		}
		if err == nil && !d.IsDir() && strings.HasSuffix(d.Name(), ".lock") {
			os.Remove(path)
		}
		return nil
	})
}

// apply applies one step in devbulk's work tree, as a commit there.
func (src *source) apply(ctx context.Context, st Step) error {
	if st.Revert != "" {
		if src.user == "" {
			return bad("revert:%s needs a git tree with its history", st.Revert)
		}
		c, err := src.resolve(ctx, st.Revert)
		if err != nil {
			return err
		}
		args := []string{"revert", "--no-edit", "--no-gpg-sign"}
		if parents, _ := git(ctx, src.user, "rev-list", "--parents", "-n", "1", c); len(strings.Fields(parents)) > 2 {
			args = append(args, "-m", "1") // a merge: reverted against its first parent
		}
		if _, err := src.inWork(ctx, append(args, c)...); err != nil {
			src.inWork(ctx, "revert", "--abort")
			return stepFailed("commit %s does not revert cleanly on %.12s: %v", st.Revert, src.commit, err)
		}
		return nil
	}
	if _, err := src.inWork(ctx, "apply", "--index", st.Patch); err != nil {
		return stepFailed("patch %s does not apply on %.12s: %v", st.Patch, src.commit, err)
	}
	_, err := src.inWork(ctx, "commit", "-q", "--no-verify", "--no-gpg-sign", "-m", "devbulk: "+filepath.Base(st.Patch))
	return err
}

// fromTarball imports a source tarball into devbulk's repository, once (by
// its content: the commit is kept in the repository's file "imported"),
// through a scratch directory removed afterwards.
func (src *source) fromTarball(ctx context.Context, dir, tarPath string) error {
	sum, err := fileDigest(tarPath)
	if err != nil {
		return err
	}
	src.id = "tar-" + sum[:12]
	if err := src.open(ctx, dir); err != nil {
		return err
	}
	mark := filepath.Join(src.repo, "imported")
	if b, err := os.ReadFile(mark); err == nil {
		src.commit = strings.TrimSpace(string(b))
		return nil
	}
	scratch := filepath.Join(dir, "unpacked", src.id)
	os.RemoveAll(scratch)
	if err := os.MkdirAll(scratch, 0o755); err != nil {
		return err
	}
	defer os.RemoveAll(scratch)
	if _, err := run(ctx, scratch, "tar", tarball(tarPath), tarPath); err != nil {
		return bad("%s: %v", tarPath, err)
	}
	tree := scratch
	// Debian's tarball holds one directory, linux-source-6.1/.
	if entries, err := os.ReadDir(scratch); err == nil && len(entries) == 1 && entries[0].IsDir() {
		tree = filepath.Join(scratch, entries[0].Name())
	}
	if err := isKernelTree(tree); err != nil {
		return fmt.Errorf("%s: %w", tarPath, err)
	}
	if src.commit, err = src.importTree(ctx, tree); err != nil {
		return err
	}
	return os.WriteFile(mark, []byte(src.commit+"\n"), 0o644)
}

// isKernelTree refuses a directory that is not a kernel source.
func isKernelTree(path string) error {
	for _, f := range []string{"Makefile", "Kconfig", "arch/x86/Makefile", "scripts/kconfig/merge_config.sh"} {
		if _, err := os.Stat(filepath.Join(path, f)); err != nil {
			return bad("%s is not a kernel source tree (no %s)", path, f)
		}
	}
	return nil
}

// git runs git in dir ("" for none) and returns its output, trimmed; its
// error carries git's last line of stderr.
func git(ctx context.Context, dir string, args ...string) (string, error) {
	return run(ctx, dir, "git", append([]string{"-c", "user.name=devbulk", "-c", "user.email=devbulk@localhost", "-c", "advice.detachedHead=false"}, args...)...)
}

func run(ctx context.Context, dir, name string, args ...string) (string, error) {
	cmd := child.Command(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(cleanEnv(), "GIT_TERMINAL_PROMPT=0", "LC_ALL=C")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		if msg := lastLine(errb.String()); msg != "" {
			return "", fmt.Errorf("%s: %s", name, msg)
		}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return "", fmt.Errorf("%s: %w", name, err)
		}
		return "", err
	}
	return strings.TrimSpace(out.String()), nil
}

// cleanEnv is the environment without what makes git use another
// repository, index or work tree than the one a call names: git bisect run
// exports GIT_DIR in a linked work tree, and with it devbulk's checkout
// would move the user's HEAD and index.
func cleanEnv() []string {
	var out []string
	for _, e := range os.Environ() {
		name, _, _ := strings.Cut(e, "=")
		switch name {
		case "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY",
			"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE", "GIT_PREFIX", "GIT_CEILING_DIRECTORIES", "GIT_DISCOVERY_ACROSS_FILESYSTEM":
			continue
		}
		out = append(out, e)
	}
	return out
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

func digest(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func fileDigest(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func isDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}

func sameFile(a, b string) bool {
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}
