package kbuild

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/devbulk/devbulk"
)

// ErrBuild marks a kernel that did not build (make failed): at a
// bisection's step, a commit that cannot be tested.
var ErrBuild = errors.New("the kernel did not build")

// Options are where and how kernels are built.
type Options struct {
	// Dir is the cache: devbulk's repositories and work trees, the build
	// directories and the kernels built (DefaultDir).
	Dir string
	// Progress, when set, hears the build's stage and elapsed time, at
	// most every ten seconds.
	Progress func(string)
}

// Kernel is a kernel built from source, ready to boot.
type Kernel struct {
	Image   string // bzImage
	Modules string // lib/modules/RELEASE
	Release string
	// Tree is the source's identity: git's tree hash, patches and
	// reverts applied.
	Tree string
	// Config is the hash of the config inputs (base and fragments).
	Config string
	// Log is the build's log (make's output).
	Log string
	// Cached says nothing was built: the same source and config were.
	Cached bool
	// Took is the build's wall time (0 when cached).
	Took time.Duration
}

// DefaultDir is ~/.cache/devbulk/kbuild.
func DefaultDir() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	dir = filepath.Join(dir, "devbulk", "kbuild")
	return dir, os.MkdirAll(dir, 0o755)
}

// Build builds the kernel s names (or finds it built): its source
// prepared in devbulk's work tree, configured, made out of tree, its
// modules installed beside its image in the cache.
func Build(ctx context.Context, s *Spec, o Options) (*Kernel, error) {
	if err := Toolchain(); err != nil {
		return nil, err
	}
	if o.Dir == "" {
		var err error
		if o.Dir, err = DefaultDir(); err != nil {
			return nil, err
		}
	}
	key, err := configKey(ctx, s)
	if err != nil {
		return nil, err
	}
	// A revision of a git tree, as it is, names its tree without devbulk's
	// work tree: a kernel built before is found without waiting for
	// another devbulk's build (a bisection boots its ends again and again).
	if tree := plainTree(ctx, s); tree != "" {
		if k, err := built(filepath.Join(o.Dir, "kernels", tree[:12]+"-"+key)); err == nil {
			k.Tree, k.Config, k.Cached = tree, key, true
			return k, nil
		}
	}
	// One devbulk at a time in a source's work tree and build directory.
	unlock, err := lock(ctx, filepath.Join(o.Dir, "lock"), o.Progress)
	if err != nil {
		return nil, err
	}
	defer unlock()
	src, err := prepare(ctx, o.Dir, s)
	if err != nil {
		return nil, err
	}
	out := filepath.Join(o.Dir, "kernels", src.tree[:12]+"-"+key)
	if k, err := built(out); err == nil {
		k.Tree, k.Config, k.Cached = src.tree, key, true
		return k, nil
	}
	build := filepath.Join(o.Dir, "build", src.id+"-"+key)
	begun := time.Now()
	if err := configure(ctx, src.work, build, s); err != nil {
		return nil, err
	}
	log := filepath.Join(build, "build.log")
	if err := compile(ctx, src.work, build, log, o); err != nil {
		return nil, err
	}
	if err := install(ctx, src.work, build, out, s); err != nil {
		return nil, fmt.Errorf("%w: installing it: %w", ErrBuild, err)
	}
	k, err := built(out)
	if err != nil {
		return nil, err
	}
	k.Tree, k.Config, k.Took = src.tree, key, time.Since(begun)
	return k, nil
}

// plainTree is the tree of a spec at a revision of a git tree with no
// patch or revert, read in the user's repository; "" for any other.
func plainTree(ctx context.Context, s *Spec) string {
	if s.Rev == "" || len(s.Steps) > 0 || !isDir(s.Path) {
		return ""
	}
	tree, err := git(ctx, s.Path, "rev-parse", "--verify", "--quiet", "--end-of-options", s.Rev+"^{tree}")
	if err != nil || len(tree) < 12 {
		return ""
	}
	return tree
}

// built is the kernel installed at out, if it is whole.
func built(out string) (*Kernel, error) {
	mods, _ := filepath.Glob(filepath.Join(out, "lib", "modules", "*"))
	image := filepath.Join(out, "bzImage")
	if _, err := os.Stat(image); err != nil || len(mods) != 1 {
		return nil, errors.New("not built")
	}
	return &Kernel{Image: image, Modules: mods[0], Release: filepath.Base(mods[0]), Log: filepath.Join(out, "build.log")}, nil
}

// compile runs make bzImage modules, its output in log; a failure carries
// the log's tail.
func compile(ctx context.Context, srcDir, build, log string, o Options) error {
	f, err := os.Create(log)
	if err != nil {
		return err
	}
	defer f.Close()
	cmd := exec.CommandContext(ctx, "make", "-C", srcDir, "O="+build, "-j"+strconv.Itoa(runtime.NumCPU()), "bzImage", "modules")
	// Its own process group. Ctrl-C sends it SIGTERM, on which make deletes
	// the targets it was writing (a truncated object newer than its source
	// would pass for built at the next step), then SIGKILL if it lingers.
	// When devbulk dies, make dies with it (Pdeathsig); compilers already
	// running finish their file.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return unix.Kill(-cmd.Process.Pid, unix.SIGTERM) }
	cmd.WaitDelay = 30 * time.Second
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	var last atomic.Value
	last.Store("")
	read := make(chan struct{})
	go func() {
		defer close(read)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			fmt.Fprintln(f, sc.Text())
			if t := strings.TrimSpace(sc.Text()); t != "" {
				last.Store(t)
			}
		}
		io.Copy(f, pr) // a line too long for the scanner: the rest as it is, so make never blocks
	}()
	stop := tell(o.Progress, func(elapsed time.Duration) string {
		return fmt.Sprintf("building the kernel: %s, at %s", elapsed.Round(time.Second), last.Load())
	})
	err = cmd.Run()
	pw.Close()
	<-read // the log whole before its tail is read
	stop()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		return fmt.Errorf("%w (%v); from %s:\n%s", ErrBuild, err, log, failure(log))
	}
	return nil
}

// install puts the image, the modules, the config and the log in out,
// whole or not at all.
func install(ctx context.Context, srcDir, build, out string, s *Spec) error {
	part := out + ".part"
	os.RemoveAll(part)
	if _, err := makeIn(ctx, srcDir, build, "-s", "modules_install", "INSTALL_MOD_PATH="+part, "INSTALL_MOD_STRIP=1", "DEPMOD=/bin/true"); err != nil {
		return err
	}
	for _, c := range [][2]string{{"arch/x86/boot/bzImage", "bzImage"}, {".config", "config"}, {"build.log", "build.log"}} {
		b, err := os.ReadFile(filepath.Join(build, c[0]))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(part, c[1]), b, 0o644); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(part, "spec"), []byte(s.String()+"\n"), 0o644); err != nil {
		return err
	}
	// The build and source links modules_install leaves point into the
	// cache's build directory: not part of the kernel.
	mods, _ := filepath.Glob(filepath.Join(part, "lib", "modules", "*"))
	for _, m := range mods {
		os.Remove(filepath.Join(m, "build"))
		os.Remove(filepath.Join(m, "source"))
	}
	os.RemoveAll(out)
	return os.Rename(part, out)
}

// tell calls say every ten seconds with the time since it started, until
// stop is called.
func tell(say func(string), line func(time.Duration) string) (stop func()) {
	if say == nil {
		return func() {}
	}
	begun, done := time.Now(), make(chan struct{})
	go func() {
		t := time.NewTicker(10 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				say(line(time.Since(begun)))
			}
		}
	}()
	return func() { close(done) }
}

// failure is what a maintainer reads of a failed build's log: the
// compiler's first errors (a parallel make goes on past them), then the
// log's last lines.
func failure(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	var out []string
	for _, l := range lines {
		if strings.Contains(l, ": error: ") || strings.Contains(l, ": fatal error: ") {
			if out = append(out, l); len(out) == 5 {
				break
			}
		}
	}
	if len(out) > 0 {
		out = append(out, "...")
	}
	return strings.Join(append(out, lines[max(0, len(lines)-10):]...), "\n")
}

// lock takes the cache's lock (flock), waiting for another devbulk's
// build, and saying so.
func lock(ctx context.Context, path string, say func(string)) (func(), error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	for waited := false; ; waited = true {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil
		}
		if !waited && say != nil {
			say("waiting for another devbulk's kernel build to finish (" + path + ")")
		}
		if !errors.Is(err, unix.EWOULDBLOCK) {
			f.Close()
			return nil, err
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// Toolchain says what building a kernel needs that this machine lacks, as
// Debian's packages (exit 4).
func Toolchain() error {
	var missing []string
	for _, t := range []struct{ file, pkg string }{
		{"gcc", "gcc"}, {"make", "make"}, {"flex", "flex"}, {"bison", "bison"}, {"bc", "bc"}, {"git", "git"}, {"perl", "perl"},
		{"/usr/include/gelf.h", "libelf-dev"}, {"/usr/include/openssl/opensslv.h", "libssl-dev"},
	} {
		if strings.HasPrefix(t.file, "/") {
			if _, err := os.Stat(t.file); err != nil {
				missing = append(missing, t.pkg)
			}
		} else if _, err := exec.LookPath(t.file); err != nil {
			missing = append(missing, t.pkg)
		}
	}
	if len(missing) > 0 {
		return devbulk.NotSupported("building a kernel needs %s: apt-get install %s", strings.Join(missing, ", "), strings.Join(missing, " "))
	}
	return nil
}
