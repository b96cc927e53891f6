package lava

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/devbulk/devbulk/vm"
)

// ArtifactOptions say what goes into the ramdisk.
type ArtifactOptions struct {
	Kernel *vm.Kernel
	// Modules are the kernel modules the suite may need (with their
	// dependencies); the guest's devbulk loads them on demand.
	Modules []string
	// Suite and Baseline are the documents the check reads (Baseline nil:
	// none).
	Suite, Baseline []byte
}

// initScript is the ramdisk's /init: what a fleet's test shell needs
// mounted, then a shell on the console with LAVA's prompt.
const initScript = `#!/bin/sh
# devbulk's ramdisk for a LAVA job: mounts, then a shell on the console.
/bin/busybox --install -s
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts && mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /run
mount -t tmpfs tmpfs /tmp
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
export PATH=/usr/sbin:/usr/bin:/sbin:/bin PS1='/ # '
echo "devbulk ramdisk on $(uname -r)"
exec setsid cttyhack /bin/sh -l
`

// Artifacts writes the kernel image and the ramdisk into dir, which must
// exist and be writable: each file is written beside its name and renamed
// into place, never over an existing file, so that dir never holds half a
// file, and a failure leaves dir as it was (but for the ramdisk, when only
// the kernel could not be placed).
func Artifacts(dir string, o ArtifactOptions) error {
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("artifacts directory %s: %w", dir, notDir(err))
	}
	self, err := os.Executable() // the guest's devbulk is this one
	if err != nil {
		return err
	}
	files := map[string][]byte{GuestSuite: o.Suite}
	if o.Baseline != nil {
		files[GuestBase] = o.Baseline
	}
	r := vm.Initramfs{Devbulk: self, Shell: []byte(initScript), Kernel: o.Kernel, Modules: o.Modules, Files: files}
	kernel, err := os.Open(o.Kernel.Vmlinuz)
	if err != nil {
		return fmt.Errorf("kernel image: %w", err)
	}
	defer kernel.Close()
	var written []string
	for _, f := range []struct {
		name  string
		write func(io.Writer) error
	}{
		{RamdiskFile, r.Write},
		{KernelFile, func(w io.Writer) error { _, err := io.Copy(w, kernel); return err }},
	} {
		tmp, err := writeBeside(dir, f.name, f.write)
		if err != nil {
			for _, t := range written {
				os.Remove(t)
			}
			return err
		}
		written = append(written, tmp)
	}
	for i, name := range []string{RamdiskFile, KernelFile} {
		// Never over a file devbulk did not just make: another job's
		// artifacts, or a name someone placed.
		if err := unix.Renameat2(unix.AT_FDCWD, written[i], unix.AT_FDCWD, filepath.Join(dir, name), unix.RENAME_NOREPLACE); err != nil {
			for _, t := range written[i:] {
				os.Remove(t)
			}
			return fmt.Errorf("%s: %w", filepath.Join(dir, name), err)
		}
	}
	return nil
}

// Existing names the artifacts dir already holds: devbulk lava job makes
// them anew, in a directory without them.
func Existing(dir string) []string {
	var out []string
	for _, name := range []string{KernelFile, RamdiskFile} {
		if _, err := os.Lstat(filepath.Join(dir, name)); err == nil {
			out = append(out, name)
		}
	}
	return out
}

// writeBeside writes a new temporary file in dir (O_EXCL: never through a
// name another process placed) and returns its path.
func writeBeside(dir, name string, write func(io.Writer) error) (string, error) {
	f, err := os.CreateTemp(dir, "."+name+".*")
	if err != nil {
		return "", fmt.Errorf("artifacts directory %s: %w", dir, err)
	}
	err = write(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("%s: %w", name, err)
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

func notDir(err error) error {
	if err == nil {
		return errors.New("not a directory")
	}
	return err
}
