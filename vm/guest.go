package vm

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/devbulk/devbulk"
)

// argsFile is where the host puts the guest's devbulk arguments.
const argsFile = "/devbulk.args"

// The guest's serial ports (see the package documentation).
const (
	guestStdout = "/dev/ttyS1"
	guestStderr = "/dev/ttyS2"
	guestExit   = "/dev/ttyS3"
)

// startedLine is the first line of the exit port: devbulk started.
const startedLine = "started"

// probeArg is the whole argument list of a KVM probe boot: StartGuest
// answers it itself, whatever the init binary is.
const probeArg = "--devbulk-vm-probe"

// IsGuest reports whether this process is the init of a devbulk VM.
func IsGuest() bool {
	if os.Getpid() != 1 {
		return false
	}
	_, err := os.Stat(argsFile)
	return err == nil
}

// ProgressParam=1 on the guest's kernel command line asks devbulk there for
// progress lines on stderr: the host's stderr is a terminal (the guest's is
// a serial port, which has no bars to draw).
const ProgressParam = "devbulk.progress"

// WantsProgress reports whether this process is a guest asked for
// progress lines.
func WantsProgress() bool {
	if !IsGuest() {
		return false
	}
	v, _ := devbulk.KernelParam(devbulk.Cmdline(), ProgressParam)
	return v == "1"
}

// Guest is the environment of devbulk running as the VM's init.
type Guest struct {
	Args           []string
	Stdout, Stderr *os.File
	exit           *os.File
}

// StartGuest mounts what devbulk needs, opens the output ports in raw mode
// and reads the arguments.
func StartGuest() (*Guest, error) {
	for _, m := range []struct{ src, dir, fstype string }{
		{"proc", "/proc", "proc"},
		{"sysfs", "/sys", "sysfs"},
		{"devtmpfs", "/dev", "devtmpfs"},
		{"tmpfs", "/run", "tmpfs"},
		{"tmpfs", "/tmp", "tmpfs"},
		{"tracefs", "/sys/kernel/tracing", "tracefs"},
	} {
		_ = os.MkdirAll(m.dir, 0o755)
		if err := unix.Mount(m.src, m.dir, m.fstype, 0, ""); err != nil && !errors.Is(err, unix.EBUSY) && m.fstype != "tracefs" {
			return nil, fmt.Errorf("mount %s: %w", m.dir, err)
		}
	}
	os.Setenv("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")
	g := &Guest{}
	var err error
	if g.Stdout, err = openRaw(guestStdout); err != nil {
		return nil, err
	}
	if g.Stderr, err = openRaw(guestStderr); err != nil {
		return nil, err
	}
	if g.exit, err = openRaw(guestExit); err != nil {
		return nil, err
	}
	// The host tells a guest that never got here (ErrNoBoot) from one that
	// died on the way (no exit code) by this line.
	fmt.Fprintln(g.exit, startedLine)
	b, err := os.ReadFile(argsFile)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &g.Args); err != nil {
		return nil, fmt.Errorf("%s: %w", argsFile, err)
	}
	if len(g.Args) == 1 && g.Args[0] == probeArg {
		g.Finish(0)
	}
	return g, nil
}

// Fail ends a guest that could not start: init exits, the kernel panics
// (panic=-1 reboots, which qemu's -no-reboot turns into an exit) and the host
// reports the console, where err is written.
func Fail(err error) {
	if f, ferr := os.OpenFile("/dev/console", os.O_WRONLY, 0); ferr == nil {
		fmt.Fprintf(f, "devbulk guest: %v\n", err)
		f.Close()
	}
	os.Exit(1)
}

// Finish reports the exit code to the host (after startedLine) and ends
// the VM.
func (g *Guest) Finish(code int) {
	fmt.Fprintf(g.exit, "%d\n", code)
	for _, f := range []*os.File{g.Stdout, g.Stderr, g.exit} {
		_ = unix.IoctlSetInt(int(f.Fd()), unix.TCSBRK, 1) // drain the UART
		f.Close()
	}
	unix.Sync()
	// A reset, not a power-off: it needs no ACPI, and qemu's -no-reboot
	// makes it the end of the VM.
	_ = unix.Reboot(unix.LINUX_REBOOT_CMD_RESTART)
	select {} // init must not exit
}

// openRaw opens a serial port with no line discipline translation, so the
// bytes devbulk writes arrive unchanged.
func openRaw(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	t, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	// cfmakeraw
	t.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON
	t.Oflag &^= unix.OPOST
	t.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
	t.Cflag &^= unix.CSIZE | unix.PARENB
	t.Cflag |= unix.CS8
	if err := unix.IoctlSetTermios(int(f.Fd()), unix.TCSETS, t); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}
