// Package kmod loads and unloads kernel modules the way modprobe does, from
// /lib/modules/$(uname -r) and its modules.dep, with finit_module(2) and
// delete_module(2) — so devbulk needs no modprobe, in a minimal VM or on a
// host.
package kmod

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/devbulk/devbulk"

	"golang.org/x/sys/unix"
)

// ErrNoModules reports a kernel that cannot load modules at all (it
// matches devbulk.ErrNotSupported).
var ErrNoModules = devbulk.NotSupported("this kernel has no loadable modules (no /proc/modules)")

// Index is a modules.dep: where each module is, and what it needs first.
type Index struct {
	dir  string
	deps map[string][]string // name → its file, then its dependencies' files, last loaded first
}

// Dir is the module directory of the running kernel.
func Dir() string {
	var u unix.Utsname
	_ = unix.Uname(&u)
	return filepath.Join("/lib/modules", unix.ByteSliceToString(u.Release[:]))
}

// Open reads dir/modules.dep.
func Open(dir string) (*Index, error) {
	f, err := os.Open(filepath.Join(dir, "modules.dep"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseDep(dir, f)
}

// ParseDep reads a modules.dep for the modules under dir: "FILE: DEP..."
// a line, files relative to dir. A line that names a file outside dir
// (absolute, or with a .. component) is refused: the index decides what
// is loaded into the kernel.
func ParseDep(dir string, r io.Reader) (*Index, error) {
	ix := &Index{dir: dir, deps: map[string][]string{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		file, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		entry := append([]string{strings.TrimSpace(file)}, strings.Fields(rest)...)
		for _, f := range entry {
			if !filepath.IsLocal(f) || !strings.Contains(filepath.Base(f), ".ko") {
				return nil, fmt.Errorf("modules.dep line %d: %q is not a module file under %s", n, f, dir)
			}
		}
		ix.deps[Name(entry[0])] = entry
	}
	return ix, sc.Err()
}

// Name is the module name of a module file: base name without the .ko
// suffix (and compression suffix), dashes as underscores.
func Name(file string) string {
	base := filepath.Base(file)
	base, _, _ = strings.Cut(base, ".ko")
	return strings.ReplaceAll(base, "-", "_")
}

// Files returns the module's file and its dependencies' files, in the order
// they must be loaded (dependencies first), relative to the index's directory.
func (ix *Index) Files(name string) ([]string, error) {
	files, ok := ix.deps[name]
	if !ok {
		return nil, fmt.Errorf("module %s not found in %s/modules.dep", name, ix.dir)
	}
	order := make([]string, 0, len(files))
	for i := len(files) - 1; i >= 0; i-- {
		order = append(order, files[i])
	}
	return order, nil
}

// Load loads the module and, first, its dependencies. params go to the
// module itself (e.g. "numdummies=0"). Modules already loaded are skipped.
func (ix *Index) Load(name, params string) error {
	files, err := ix.Files(name)
	if err != nil {
		return err
	}
	for i, file := range files {
		p := ""
		if i == len(files)-1 {
			p = params
		}
		if err := loadFile(filepath.Join(ix.dir, file), p); err != nil {
			return fmt.Errorf("loading %s: %w", Name(file), err)
		}
	}
	return nil
}

// moduleInitCompressedFile is MODULE_INIT_COMPRESSED_FILE: the kernel
// decompresses .ko.xz/.ko.zst/.ko.gz itself (CONFIG_MODULE_DECOMPRESS,
// 5.17+).
const moduleInitCompressedFile = 4

// loadFile loads one module file. A compressed one goes to the kernel as
// it is where the kernel decompresses modules; where it cannot (EINVAL for
// the flag before 5.17, EOPNOTSUPP without CONFIG_MODULE_DECOMPRESS),
// devbulk decompresses it and hands the kernel the image (init_module).
func loadFile(path, params string) error {
	suffix, _ := compression(path)
	err := finitModule(path, params, suffix != "")
	if suffix != "" && (errors.Is(err, unix.EINVAL) || errors.Is(err, unix.EOPNOTSUPP)) {
		var image []byte
		if image, err = readModule(path); err != nil {
			return fmt.Errorf("this kernel does not decompress modules itself (5.17+, CONFIG_MODULE_DECOMPRESS), and devbulk could not: %w", err)
		}
		err = unix.InitModule(image, params)
	}
	if errors.Is(err, unix.EEXIST) {
		return nil // already loaded
	}
	return err
}

func finitModule(path, params string, compressed bool) error {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	flags := 0
	if compressed {
		flags = moduleInitCompressedFile
	}
	return unix.FinitModule(fd, params, flags)
}

// Loaded reports whether a module is loaded as a module (not built in).
func Loaded(name string) (bool, error) {
	f, err := os.Open("/proc/modules")
	if err != nil {
		return false, ErrNoModules
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if n, _, _ := strings.Cut(sc.Text(), " "); n == name {
			return true, nil
		}
	}
	return false, sc.Err()
}

// Unload removes a module (rmmod): it fails rather than waits while the
// module is in use.
func Unload(name string) error {
	if err := unix.DeleteModule(name, unix.O_NONBLOCK); err != nil {
		return fmt.Errorf("delete_module(%s): %w", name, err)
	}
	return nil
}
