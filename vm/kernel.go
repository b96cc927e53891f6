package vm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/devbulk/devbulk/internal/child"
	"github.com/devbulk/devbulk/kmod"
)

// Kernel is a bootable kernel and its modules.
type Kernel struct {
	Vmlinuz string
	// Modules is the kernel's module directory (lib/modules/RELEASE); empty
	// for a kernel used without modules.
	Modules string
	// Release is the kernel release (`uname -r` in the guest).
	Release string
}

// DefaultCache is where devbulk keeps the kernels it downloads.
func DefaultCache() (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	dir = filepath.Join(dir, "devbulk", "kernels")
	return dir, os.MkdirAll(dir, 0o755)
}

// debianMeta is the package that always points at Debian's current cloud
// kernel image.
const debianMeta = "linux-image-cloud-amd64"

// DebianKernel returns Debian's cloud kernel, downloading it with apt and
// extracting it into cacheDir the first time; later calls reuse it.
func DebianKernel(cacheDir string) (*Kernel, error) {
	image, err := debianImagePackage()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(cacheDir, image)
	if k, err := kernelIn(dir); err == nil {
		return k, nil
	}
	tmp, err := os.MkdirTemp(cacheDir, image+".part")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	if _, err := run(tmp, "apt-get", "download", image); err != nil {
		return nil, fmt.Errorf("kernel package %s unavailable: %w", image, err)
	}
	debs, _ := filepath.Glob(filepath.Join(tmp, image+"_*.deb"))
	if len(debs) != 1 {
		return nil, fmt.Errorf("apt-get download %s left %d packages", image, len(debs))
	}
	root := filepath.Join(tmp, "root")
	if _, err := run(tmp, "dpkg-deb", "-x", debs[0], root); err != nil {
		return nil, err
	}
	k, err := locate(root)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", image, err)
	}
	// The package leaves modules.dep to depmod at install time: make it.
	if err := writeModulesDep(k.Modules); err != nil {
		return nil, err
	}
	if err := os.Rename(root, dir); err != nil {
		// Another devbulk may have finished the same download first.
		if k, kerr := kernelIn(dir); kerr == nil {
			return k, nil
		}
		// A broken earlier extraction: replace it.
		if err := os.RemoveAll(dir); err != nil {
			return nil, err
		}
		if err := os.Rename(root, dir); err != nil {
			return nil, err
		}
	}
	return kernelIn(dir)
}

func writeModulesDep(dir string) error {
	ix, err := kmod.Scan(dir)
	if err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, "modules.dep"))
	if err != nil {
		return err
	}
	if err := ix.WriteDep(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// debianImagePackage resolves the image package the meta package depends on
// (linux-image-6.1.0-NN-cloud-amd64), from apt's lists.
func debianImagePackage() (string, error) {
	out, err := run("", "apt-cache", "depends", "--no-recommends", "--no-suggests", debianMeta)
	if err != nil {
		return "", fmt.Errorf("kernel package %s unavailable (run apt-get update?): %w", debianMeta, err)
	}
	for _, line := range strings.Split(out, "\n") {
		if dep, ok := strings.CutPrefix(strings.TrimSpace(line), "Depends: "); ok && strings.HasPrefix(dep, "linux-image-") {
			return dep, nil
		}
	}
	return "", fmt.Errorf("kernel package %s unavailable: no linux-image dependency (run apt-get update?)", debianMeta)
}

// kernelIn returns the kernel cached at root, complete with modules.dep.
func kernelIn(root string) (*Kernel, error) {
	k, err := locate(root)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(k.Modules, "modules.dep")); err != nil {
		return nil, err
	}
	return k, nil
}

// locate finds boot/vmlinuz-* and lib/modules/* under an extracted kernel
// package.
func locate(root string) (*Kernel, error) {
	images, _ := filepath.Glob(filepath.Join(root, "boot", "vmlinuz-*"))
	mods, _ := filepath.Glob(filepath.Join(root, "lib", "modules", "*"))
	if len(images) != 1 || len(mods) != 1 {
		return nil, fmt.Errorf("no single boot/vmlinuz-* and lib/modules/* under %s", root)
	}
	return &Kernel{Vmlinuz: images[0], Modules: mods[0], Release: filepath.Base(mods[0])}, nil
}

// LocalKernel describes a kernel of your own: an image (arch/x86/boot/bzImage)
// and, optionally, its module directory (as made by make modules_install
// INSTALL_MOD_PATH=..., the directory named after the release).
func LocalKernel(vmlinuz, modules string) (*Kernel, error) {
	if _, err := os.Stat(vmlinuz); err != nil {
		return nil, fmt.Errorf("kernel image: %w", err)
	}
	k := &Kernel{Vmlinuz: vmlinuz}
	if modules != "" {
		if st, err := os.Stat(modules); err != nil || !st.IsDir() {
			return nil, fmt.Errorf("--modules %s: not a directory (want lib/modules/RELEASE)", modules)
		}
		k.Modules, k.Release = modules, filepath.Base(modules)
	}
	return k, nil
}

// run runs a command in dir and returns its stdout; the error carries the
// first line of its stderr.
func run(dir, name string, args ...string) (string, error) {
	cmd := child.Command(context.Background(), name, args...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			line, _, _ := strings.Cut(strings.TrimSpace(errb.String()), "\n")
			return "", fmt.Errorf("%s %s: %s", name, strings.Join(args, " "), line)
		}
		return "", err
	}
	return out.String(), nil
}
