package vm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/devbulk/devbulk/internal/child"
	"github.com/devbulk/devbulk/kbuild"
)

// Kernel is a kernel configuration: a bootable image, its modules, and
// what to add to its command line.
type Kernel struct {
	// Name is the kernel as it was asked for: "debian:6.12", a package, a
	// path.
	Name    string
	Vmlinuz string
	// Modules is the kernel's module directory (lib/modules/RELEASE); empty
	// for a kernel used without modules.
	Modules string
	// Release is the kernel release (`uname -r` in the guest).
	Release string
	// Package is the Debian image package it came from, if it did.
	Package string
	// Append is added to the guest's kernel command line (rcu_nocbs=all,
	// preempt=full, ...).
	Append string
}

// Label names the configuration in tables: the name, and what was added to
// its command line.
func (k *Kernel) Label() string {
	return strings.TrimSpace(k.Name + " " + k.Append)
}

// Describe says which kernel this is: its name, the package it resolved
// to, the image, and what its command line gets.
func (k *Kernel) Describe() string {
	d := k.Name
	if k.Package != "" && k.Package != k.Name {
		d += " = " + k.Package
	}
	if k.Vmlinuz != k.Name {
		d += " (" + k.Vmlinuz + ")"
	}
	if k.Append != "" {
		d += " booted with " + k.Append
	}
	return d
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

// debianNames are the short names of Debian's kernels and the packages
// they stand for ("debian" is the cloud kernel apt installs by default).
var debianNames = map[string]string{
	"debian":         "linux-image-cloud-amd64",
	"debian:6.1":     "linux-image-cloud-amd64",
	"debian:6.12":    "linux-image-6.12-cloud-amd64",
	"debian:6.1-rt":  "linux-image-rt-amd64",
	"debian:6.12-rt": "linux-image-6.12-rt-amd64",
}

// debianPoint is the cloud image package of a Debian point release named
// as debian:6.1.0-47 (an ABI) or debian:6.12.117 (a version).
func debianPoint(name string) (string, bool) {
	m := pointRelease().FindStringSubmatch(name)
	switch {
	case m == nil:
		return "", false
	case strings.Contains(m[1], "-"):
		return "linux-image-" + m[1] + "-cloud-amd64", true
	}
	return "linux-image-" + m[1] + "+deb12-cloud-amd64", true
}

var pointRelease = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^debian:(\d+\.\d+\.\d+(?:-\d+)?)$`) })

// ErrBadSpec marks a kernel specification that names nothing (a usage
// error), as opposed to a kernel that could not be fetched.
var ErrBadSpec = errors.New("no such kernel")

// badSpec is an error of a specification that names nothing: its own
// text, matching ErrBadSpec.
type badSpec struct{ error }

func (badSpec) Is(target error) bool { return target == ErrBadSpec }
func (e badSpec) Unwrap() error      { return e.error }

// Find finds the kernel configuration spec names: "KERNEL [ARGS...]".
// KERNEL is debian (debian:6.1), debian:6.12, debian:6.1-rt,
// debian:6.12-rt, a Debian image package (linux-image-6.1.0-47-cloud-amd64,
// or a meta package such as linux-image-6.12-cloud-amd64), or the path of
// an image, PATH[:MODULES_DIR]; ARGS are added to the guest's kernel
// command line. Debian kernels are fetched into cacheDir (DebianKernel).
func Find(spec, cacheDir string) (*Kernel, error) {
	return FindBuilding(context.Background(), spec, cacheDir, nil)
}

// SpecHelp says how a kernel configuration is named, for every flag that
// takes one (vm --kernel, check --vm-kernel, lava job --kernel).
const SpecHelp = "'K [ARGS]': K is debian (debian:6.1), debian:6.12, debian:6.1-rt, debian:6.12-rt, a Debian package " +
	"(linux-image-6.1.0-47-cloud-amd64), PATH[:MODULES_DIR] (a kernel image such as arch/x86/boot/bzImage, and its lib/modules/RELEASE), " +
	"or a source devbulk builds: src:DIR (a git work tree or an unpacked source), src:TARBALL, src:TREE@REV, each followed by " +
	"+FILE (a patch) or +revert:REV, repeatable (docs/source.md); ARGS go on its command line ('debian:6.1 rcu_nocbs=all')"

// FindBuilding is Find that builds a kernel from source (src:..., see
// package kbuild) when the spec names one, telling progress how the build
// goes; ctx stops the build.
func FindBuilding(ctx context.Context, spec, cacheDir string, progress func(string)) (*Kernel, error) {
	name, args, err := checkSpec(spec)
	if err != nil {
		return nil, err
	}
	var k *Kernel
	if kbuild.IsSource(name) {
		k, err = sourceKernel(ctx, name, progress)
	} else if debianName(name) {
		var image string
		if image, err = DebianImage(name); err == nil {
			k, err = DebianKernel(cacheDir, image)
		}
	} else {
		image, modules, _ := strings.Cut(name, ":")
		if k, err = LocalKernel(image, modules); err != nil {
			err = badSpec{err}
		}
	}
	if err != nil {
		return nil, err
	}
	k.Name, k.Append = name, args
	return k, nil
}

// Check checks spec as Find would, fetching nothing: a Debian name devbulk
// knows, a package's name, or a kernel image on disk (and its modules).
func Check(spec string) error {
	name, _, err := checkSpec(spec)
	if err != nil || debianName(name) || kbuild.IsSource(name) {
		return err
	}
	image, modules, _ := strings.Cut(name, ":")
	if _, err := LocalKernel(image, modules); err != nil {
		return badSpec{err}
	}
	return nil
}

func debianName(name string) bool {
	return name == "debian" || strings.HasPrefix(name, "debian:") || strings.HasPrefix(name, "linux-image-")
}

// checkSpec splits spec into the kernel's name and its command line, and
// refuses a name that is neither Debian's nor a file.
func checkSpec(spec string) (name, args string, err error) {
	fields := strings.Fields(spec)
	if len(fields) == 0 {
		return "", "", badSpec{errors.New("empty kernel specification")}
	}
	name, args = fields[0], strings.Join(fields[1:], " ")
	if kbuild.IsSource(name) {
		if _, err := kbuild.Parse(name); err != nil {
			return "", "", badSpec{err}
		}
		return name, args, nil
	}
	if debianName(name) {
		if _, point := debianPoint(name); !point && debianNames[name] == "" && !strings.HasPrefix(name, "linux-image-") {
			return "", "", badSpec{fmt.Errorf("unknown Debian kernel %q: valid are debian, debian:6.1, debian:6.12, debian:6.1-rt, debian:6.12-rt, a point release (debian:6.1.0-47, debian:6.12.117), or a package name (linux-image-...)", name)}
		}
		return name, args, nil
	}
	image, _, _ := strings.Cut(name, ":")
	if _, err := os.Stat(image); !strings.Contains(image, "/") && errors.Is(err, os.ErrNotExist) {
		return "", "", badSpec{fmt.Errorf("unknown kernel %q: valid are debian, debian:6.1, debian:6.12, debian:6.1-rt, debian:6.12-rt, a package name (linux-image-...), or the path of a kernel image", name)}
	}
	return name, args, nil
}

// DebianImage resolves a Debian kernel's name — debian, debian:6.1,
// debian:6.12, debian:6.1-rt, debian:6.12-rt, or a package — to the image
// package it stands for today, from apt's lists: a meta package
// (linux-image-6.12-cloud-amd64) to the image it depends on
// (linux-image-6.12.118+deb12-cloud-amd64).
func DebianImage(name string) (string, error) {
	pkg, short := debianNames[name]
	if point, ok := debianPoint(name); ok {
		pkg, short = point, true
	}
	switch {
	case short:
	case strings.HasPrefix(name, "linux-image-"):
		pkg = name
	default:
		return "", badSpec{fmt.Errorf("unknown Debian kernel %q: valid are debian, debian:6.1, debian:6.12, debian:6.1-rt, debian:6.12-rt, or a package name (linux-image-...)", name)}
	}
	if !packageName().MatchString(pkg) {
		return "", badSpec{fmt.Errorf("%q is not a Debian package name", pkg)}
	}
	out, err := run("", "apt-cache", "depends", "--no-recommends", "--no-suggests", pkg)
	if err != nil {
		return "", fmt.Errorf("kernel package %s unavailable (run apt-get update?): %w", pkg, err)
	}
	image := imageOf(pkg, out)
	if !packageName().MatchString(image) { // it names a directory of the cache
		return "", fmt.Errorf("apt resolved %s to %q, not a package name", pkg, image)
	}
	return image, nil
}

// packageName is Debian's syntax of a package name.
var packageName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9+.-]+$`) })

// DebianKernel returns the Debian kernel image package image (see
// DebianImage), downloading it with apt and extracting it into cacheDir the
// first time; later calls reuse it.
func DebianKernel(cacheDir, image string) (*Kernel, error) {
	dir := filepath.Join(cacheDir, image)
	if k, err := kernelIn(dir, image); err == nil {
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
	if _, err := locate(root); err != nil {
		return nil, fmt.Errorf("%s: %w", image, err)
	}
	// The package leaves modules.dep to depmod at install time; devbulk
	// reads the modules it needs when it builds an initramfs. The rename is
	// the last step: a directory in the cache is a whole extraction.
	if err := os.Rename(root, dir); err != nil {
		// Another devbulk may have finished the same download first.
		if k, kerr := kernelIn(dir, image); kerr == nil {
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
	return kernelIn(dir, image)
}

// imageOf reads `apt-cache depends` of pkg: the linux-image package a meta
// package depends on, or pkg itself when it depends on none (an image).
func imageOf(pkg, depends string) string {
	for _, line := range strings.Split(depends, "\n") {
		if dep, ok := strings.CutPrefix(strings.TrimSpace(line), "Depends: "); ok && strings.HasPrefix(dep, "linux-image-") {
			return dep
		}
	}
	return pkg
}

// kernelIn returns the kernel cached at root, extracted from package pkg.
func kernelIn(root, pkg string) (*Kernel, error) {
	k, err := locate(root)
	if err != nil {
		return nil, err
	}
	k.Package = pkg
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

// sourceKernel builds the kernel a src: spec names (or finds it built).
func sourceKernel(ctx context.Context, name string, progress func(string)) (*Kernel, error) {
	s, err := kbuild.Parse(name)
	if err != nil {
		return nil, badSpec{err}
	}
	b, err := kbuild.Build(ctx, s, kbuild.Options{Progress: progress})
	if errors.Is(err, kbuild.ErrBad) {
		return nil, badSpec{err}
	}
	if err != nil {
		return nil, err
	}
	if progress != nil && !b.Cached {
		progress(fmt.Sprintf("built %s in %s (log: %s)", name, b.Took.Round(time.Second), b.Log))
	}
	return &Kernel{Vmlinuz: b.Image, Modules: b.Modules, Release: b.Release, Package: "src-" + b.Tree[:12] + "-" + b.Config}, nil // the tree and config built, in every result document
}

// LocalKernel describes a kernel of your own: an image (arch/x86/boot/bzImage)
// and, optionally, its module directory (as made by make modules_install
// INSTALL_MOD_PATH=..., the directory named after the release).
func LocalKernel(vmlinuz, modules string) (*Kernel, error) {
	if err := isImage(vmlinuz); err != nil {
		return nil, fmt.Errorf("kernel image: %w", err)
	}
	k := &Kernel{Name: vmlinuz, Vmlinuz: vmlinuz}
	if modules != "" {
		if st, err := os.Stat(modules); err != nil || !st.IsDir() {
			return nil, fmt.Errorf("--modules %s: not a directory (want lib/modules/RELEASE)", modules)
		}
		k.Modules, k.Release = modules, filepath.Base(modules)
	}
	return k, nil
}

// isImage checks that path is an x86 kernel image: a regular file with
// the boot protocol's "HdrS" at 0x202, as arch/x86/boot/bzImage and
// /boot/vmlinuz-* have. qemu would boot anything else into a hang.
func isImage(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil {
		return err
	} else if !st.Mode().IsRegular() {
		return fmt.Errorf("%s is not a file: want a kernel image such as arch/x86/boot/bzImage", path)
	}
	magic := make([]byte, 4)
	if _, err := f.ReadAt(magic, 0x202); err != nil || string(magic) != "HdrS" {
		return fmt.Errorf("%s is not an x86 kernel image (no boot header \"HdrS\" at 0x202): want arch/x86/boot/bzImage or /boot/vmlinuz-*", path)
	}
	return nil
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
