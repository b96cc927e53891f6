package vm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/devbulk/devbulk"

	"github.com/devbulk/devbulk/internal/child"
	"github.com/devbulk/devbulk/internal/workdir"
)

// Config describes one VM run.
type Config struct {
	Kernel *Kernel
	// Devbulk is the binary to run as the guest's init (default: this one).
	Devbulk string
	// Modules are the kernel modules to put in the guest, with their
	// dependencies; devbulk loads them on demand.
	Modules []string
	CPUs    int // default 2
	MemMiB  int // default 1024
	// Accel is "kvm", "tcg", or "" to use KVM when a probe boot works.
	Accel string
	// Log, when set, receives one line per step (accelerator, boot).
	Log func(string)
	// Progress asks devbulk in the guest for progress lines on its stderr
	// (which reaches the host's as the guest writes it, not at the end).
	Progress bool
	// Files are more files for the guest's root, by path.
	Files map[string][]byte
}

// ErrNoQemu reports that qemu is not installed (it matches
// devbulk.ErrNotSupported).
var ErrNoQemu = devbulk.NotSupported("qemu-system-x86_64 not found (apt-get install qemu-system-x86)")

// qemuBinary is the emulator devbulk runs.
const qemuBinary = "qemu-system-x86_64"

// Run boots the VM, runs devbulk with args in it, copies the guest's stdout
// and stderr to the given writers, and returns the guest's exit code. The
// error is for the VM itself (no qemu, guest crashed, ctx ended).
func Run(ctx context.Context, cfg Config, args []string, stdout, stderr io.Writer) (int, error) {
	qemu, err := exec.LookPath(qemuBinary)
	if err != nil {
		return 0, ErrNoQemu
	}
	if cfg.Devbulk == "" {
		if cfg.Devbulk, err = os.Executable(); err != nil {
			return 0, err
		}
	}
	if cfg.CPUs <= 0 {
		cfg.CPUs = 2
	}
	if cfg.MemMiB <= 0 {
		cfg.MemMiB = 1024
	}
	switch cfg.Accel {
	case "":
		cfg.Accel = chooseAccel(ctx, qemu, cfg)
	case "kvm":
		// Where KVM cannot run a guest, qemu aborts with its own text
		// ("failed to set MSR 0x10a" in a nested guest) or hangs: a probe
		// boot says so in one line first.
		if err := probeKVM(ctx, qemu, cfg); err != nil {
			return 0, devbulk.NotSupported("--accel kvm: KVM cannot run a guest here (%s); use --accel tcg, or leave --accel out to fall back", err)
		}
	}
	cfg.log("accelerator %s, kernel %s, %d CPUs, %d MiB", cfg.Accel, cfg.Kernel.Describe(), cfg.CPUs, cfg.MemMiB)
	b, err := boot(ctx, qemu, cfg, args, stderr)
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(b.dir)
	if _, err := io.Copy(stdout, b.port(1)); err != nil {
		return 0, err
	}
	return b.code, b.err
}

// follow copies what the guest writes to serial port file path into w as
// it is written, until stop is closed, then the rest: a long phase's
// progress reaches the host while it runs.
func follow(path string, w io.Writer, stop <-chan struct{}) {
	var f *os.File
	for {
		if f == nil {
			f, _ = os.Open(path)
		}
		if f != nil {
			_, _ = io.Copy(w, f)
		}
		select {
		case <-stop:
			if f != nil {
				_, _ = io.Copy(w, f)
				f.Close()
			}
			return
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (c Config) log(format string, args ...any) {
	if c.Log != nil {
		c.Log(fmt.Sprintf(format, args...))
	}
}

// booted is what a finished VM left behind.
type booted struct {
	dir  string // serial port files ttyS0..3
	code int
	err  error
}

// port returns what the guest wrote to serial port n.
func (b *booted) port(n int) io.Reader {
	data, _ := os.ReadFile(filepath.Join(b.dir, fmt.Sprintf("ttyS%d", n)))
	return bytes.NewReader(data)
}

// boot runs one VM to completion. It fails when qemu cannot start or ctx
// ends; a guest that died without an exit code is reported in b.err with
// the end of its console.
func boot(ctx context.Context, qemu string, cfg Config, args []string, stderr io.Writer) (*booted, error) {
	dir, err := workdir.Make(workDirPattern)
	if err != nil {
		return nil, err
	}
	b := &booted{dir: dir}
	initrd := filepath.Join(dir, "initramfs.gz")
	f, err := os.Create(initrd)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	r := Initramfs{Devbulk: cfg.Devbulk, Args: args, Kernel: cfg.Kernel, Modules: cfg.Modules, Files: cfg.Files}
	if err := r.Write(f); err != nil {
		f.Close()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("building the initramfs: %w", err)
	}
	f.Close()

	qargs := []string{
		"-nodefaults", "-no-reboot", "-display", "none", "-monitor", "none",
		"-accel", cfg.Accel, "-cpu", cpuModel(cfg.Accel),
		"-smp", strconv.Itoa(cfg.CPUs), "-m", strconv.Itoa(cfg.MemMiB),
		"-kernel", cfg.Kernel.Vmlinuz, "-initrd", initrd,
		"-append", cmdline(cfg),
	}
	for n := 0; n < 4; n++ {
		qargs = append(qargs, "-serial", "file:"+filepath.Join(dir, fmt.Sprintf("ttyS%d", n)))
	}
	cmd := child.Command(ctx, qemu, qargs...)
	if stderr != nil {
		stop, done := make(chan struct{}), make(chan struct{})
		go func() { follow(filepath.Join(dir, "ttyS2"), stderr, stop); close(done) }()
		defer func() { close(stop); <-done }()
	}
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		defer os.RemoveAll(dir)
		return nil, fmt.Errorf("guest did not finish: %w%s", ctx.Err(), b.leftovers())
	}
	exit, _ := os.ReadFile(filepath.Join(dir, "ttyS3"))
	started, code, _ := strings.Cut(string(exit), "\n")
	if err != nil {
		// qemu failed: before devbulk started (it could not load the
		// kernel), the kernel did not boot; after, the run crashed.
		defer os.RemoveAll(dir)
		qerr := fmt.Errorf("%s: %v: %s%s", qemu, err, strings.TrimSpace(string(out)), b.leftovers())
		if started != startedLine {
			qerr = fmt.Errorf("%w: %w", ErrNoBoot, qerr)
		}
		return nil, qerr
	}
	if started != startedLine {
		b.err = fmt.Errorf("%w%s", ErrNoBoot, b.leftovers())
		return b, nil
	}
	if b.code, err = strconv.Atoi(strings.TrimSpace(code)); err != nil {
		b.err = fmt.Errorf("guest stopped without an exit code%s", b.leftovers())
	}
	return b, nil
}

// ErrNoBoot reports a guest kernel that never started devbulk: qemu could
// not load it, it panicked at boot, or could not run the initramfs.
var ErrNoBoot = errors.New("the guest kernel did not boot to devbulk")

// cmdline is the guest kernel's command line: the console, a panic that
// ends the VM, the accelerator (recorded in every result document), the
// Debian package the kernel came from, the request for progress lines, and
// last what the kernel configuration adds.
func cmdline(cfg Config) string {
	line := "console=ttyS0 panic=-1 quiet " + devbulk.AccelParam + "=" + cfg.Accel
	if cfg.Kernel.Package != "" {
		line += " " + devbulk.PackageParam + "=" + cfg.Kernel.Package
	}
	if cfg.Progress {
		line += " " + ProgressParam + "=1"
	}
	if cfg.Kernel.Append != "" {
		line += " " + cfg.Kernel.Append
	}
	return line
}

// leftovers is what a guest that did not finish wrote: the end of its
// console and of its stderr.
func (b *booted) leftovers() string {
	console, _ := os.ReadFile(filepath.Join(b.dir, "ttyS0"))
	stderr, _ := os.ReadFile(filepath.Join(b.dir, "ttyS2"))
	return fmt.Sprintf("; its console ends:\n%s\nits stderr ends:\n%s", tail(string(console), 40), tail(string(stderr), 20))
}

// cpuModel: the host's CPU under KVM; under TCG qemu's default, which
// emulates faster than "max".
func cpuModel(accel string) string {
	if accel == "kvm" {
		return "host"
	}
	return "qemu64"
}

func tail(s string, lines int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(l) > lines {
		l = l[len(l)-lines:]
	}
	return strings.Join(l, "\n")
}

var (
	accelOnce sync.Once
	accel     string
)

// ProbeAccel is the accelerator a guest gets here: "kvm" when a probe boot
// of cfg's kernel under KVM works, else "tcg" (see chooseAccel).
func ProbeAccel(ctx context.Context, cfg Config) string {
	qemu, err := exec.LookPath(qemuBinary)
	if err != nil {
		return "tcg"
	}
	if cfg.Devbulk == "" {
		if cfg.Devbulk, err = os.Executable(); err != nil {
			return "tcg"
		}
	}
	return chooseAccel(ctx, qemu, cfg)
}

// chooseAccel uses KVM when /dev/kvm opens and a probe boot under it runs
// devbulk to completion within 15 s (it takes 1–2 s where KVM works);
// otherwise TCG. (A nested KVM guest can
// crash on boot: the probe catches that.)
func chooseAccel(ctx context.Context, qemu string, cfg Config) string {
	accelOnce.Do(func() {
		accel = "tcg"
		if err := probeKVM(ctx, qemu, cfg); err != nil {
			cfg.log("TCG: %v", err)
			return
		}
		accel = "kvm"
	})
	return accel
}

// probeKVM boots devbulk under KVM with a 15 s limit, and says in one line
// why that failed.
func probeKVM(ctx context.Context, qemu string, cfg Config) error {
	f, err := os.OpenFile("/dev/kvm", os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("no usable /dev/kvm: %w", err)
	}
	f.Close()
	pctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	probe := cfg
	probe.Accel, probe.Modules = "kvm", nil
	b, err := boot(pctx, qemu, probe, []string{probeArg}, nil)
	if err == nil {
		os.RemoveAll(b.dir)
		if b.err == nil && b.code == 0 {
			return nil
		}
		err = b.err
	}
	if pctx.Err() != nil && ctx.Err() == nil {
		return errors.New("a probe boot under KVM did not finish in 15 s")
	}
	return fmt.Errorf("a probe boot under KVM failed: %s", firstLine(err))
}

func firstLine(err error) string {
	if err == nil {
		return "exit code not 0"
	}
	l, _, _ := strings.Cut(err.Error(), "\n")
	return l
}
