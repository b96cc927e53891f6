package vm

import (
	"bytes"
	"compress/gzip"
	"context"
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/cavaliergopher/cpio"

	"github.com/devbulk/devbulk/internal/child"
	"github.com/devbulk/devbulk/kmod"
)

// Initramfs describes the guest's root filesystem.
type Initramfs struct {
	// Devbulk is the devbulk binary that becomes /init.
	Devbulk string
	// Args are devbulk's arguments in the guest.
	Args []string
	// Shell, when set, is the /init script instead: devbulk is then
	// /usr/bin/devbulk and Args are not written (a fleet's ramdisk, whose
	// init ends in a shell on the console for the fleet's test runner).
	Shell []byte
	// Kernel provides the modules; Modules names those to include (their
	// dependencies come along).
	Kernel  *Kernel
	Modules []string
	// Files are more files for the guest, by path (a suite for devbulk
	// check, say).
	Files map[string][]byte
}

// Write writes the initramfs as a gzip-compressed newc cpio archive.
func (r *Initramfs) Write(w io.Writer) error {
	files, err := r.hostFiles()
	if err != nil {
		return err
	}
	generated, err := r.generatedFiles(files)
	if err != nil {
		return err
	}
	zw := gzip.NewWriter(w)
	cw := cpio.NewWriter(zw)
	if err := r.writeArchive(cw, files, generated); err != nil {
		return err
	}
	if err := cw.Close(); err != nil {
		return err
	}
	return zw.Close()
}

// hostFiles are the host's programs the guest gets (devbulk, busybox, ip,
// ipvsadm, with their libraries), by path in the guest.
func (r *Initramfs) hostFiles() (map[string]string, error) {
	files := map[string]string{} // path in the guest → path on the host
	self := "/init"
	if r.Shell != nil {
		self = DevbulkPath
	}
	if err := addProgram(files, self, r.Devbulk); err != nil {
		return nil, fmt.Errorf("devbulk binary: %w", err)
	}
	if bb, err := exec.LookPath("busybox"); err == nil {
		files["/bin/busybox"] = bb
	}
	if r.Shell != nil { // the init is busybox's sh, and it runs alone
		if files["/bin/busybox"] == "" {
			return nil, errors.New("busybox not found: a fleet ramdisk's init is a busybox shell (apt-get install busybox-static)")
		}
		if dyn, err := dynamic(files["/bin/busybox"]); err != nil || dyn {
			return nil, fmt.Errorf("%s is not a static busybox (%v): a fleet ramdisk needs one (apt-get install busybox-static)", files["/bin/busybox"], err)
		}
	}
	// iproute2's ip, for side-by-side comparisons in the guest (busybox's
	// ip applet would shadow it in busybox sh: it lives at /usr/sbin/ip);
	// ipvsadm, where the host has it, for the classic form of ipvs
	// payloads (netns churn --compare exec).
	for _, prog := range []string{"ip", "ipvsadm"} {
		if path, err := exec.LookPath(prog); err == nil {
			if err := addProgram(files, "/usr/sbin/"+prog, path); err != nil {
				return nil, fmt.Errorf("%s: %w", prog, err)
			}
		}
	}
	return files, nil
}

// generatedFiles are the files written from memory: r.Files, devbulk's
// arguments, and the modules' dependencies (the modules join files).
func (r *Initramfs) generatedFiles(files map[string]string) (map[string][]byte, error) {
	generated := map[string][]byte{}
	for p, b := range r.Files {
		generated[p] = b
	}
	if r.Shell == nil {
		var err error
		if generated[argsFile], err = json.Marshal(r.Args); err != nil {
			return nil, err
		}
	}
	if r.Kernel.Modules != "" {
		dep, err := addModules(files, r.Kernel, r.Modules)
		if err != nil {
			return nil, err
		}
		generated["/lib/modules/"+r.Kernel.Release+"/modules.dep"] = dep
	}
	return generated, nil
}

// writeArchive writes the directories, the host's files, busybox's
// applets, the generated files and a shell init.
func (r *Initramfs) writeArchive(cw *cpio.Writer, files map[string]string, generated map[string][]byte) error {
	all := slices.Concat(slices.Collect(maps.Keys(files)), slices.Collect(maps.Keys(generated)))
	if err := writeDirs(cw, all); err != nil {
		return err
	}
	for _, p := range slices.Sorted(maps.Keys(files)) {
		if err := writeFile(cw, p, files[p]); err != nil {
			return err
		}
	}
	if files["/bin/busybox"] != "" {
		// sh for exec payloads; unshare and sysctl for netns churn
		// --compare exec (and the tests' commands: cat, test, ls); xz
		// for .ko.xz modules where the kernel does not decompress them.
		for _, applet := range []string{"/bin/sh", "/bin/unshare", "/bin/sysctl", "/bin/cat", "/bin/test", "/bin/ls", "/bin/xz"} {
			if err := writeBytes(cw, applet, []byte("busybox"), cpio.TypeSymlink|0o777); err != nil {
				return err
			}
		}
	}
	for p, b := range generated {
		if err := writeBytes(cw, p, b, 0o644); err != nil {
			return err
		}
	}
	if r.Shell != nil {
		return writeBytes(cw, "/init", r.Shell, 0o755)
	}
	return nil
}

// DevbulkPath is where devbulk is in a guest whose init is a shell.
const DevbulkPath = "/usr/bin/devbulk"

// addProgram adds a program and, if it is dynamically linked, its loader
// and libraries (as ldd lists them).
func addProgram(files map[string]string, guestPath, hostPath string) error {
	dyn, err := dynamic(hostPath)
	if err != nil {
		return err
	}
	files[guestPath] = hostPath
	if !dyn {
		return nil
	}
	out, err := child.Command(context.Background(), "ldd", hostPath).Output()
	if err != nil {
		return fmt.Errorf("ldd %s: %w", hostPath, err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, "not found") {
			return fmt.Errorf("ldd %s: %s", hostPath, strings.TrimSpace(line))
		}
		for _, field := range strings.Fields(line) {
			if strings.HasPrefix(field, "/") {
				files[field] = field
			}
		}
	}
	return nil
}

// dynamic reports whether an ELF program has an interpreter (a dynamic
// loader).
func dynamic(path string) (bool, error) {
	f, err := elf.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return true, nil
		}
	}
	return false, nil
}

// addModules adds the files of the named modules and their dependencies, and
// returns the modules.dep the guest gets; names missing from the kernel
// (built in) are skipped. In a directory without modules.dep (a Debian
// package before depmod) the named modules and their dependencies are read.
// Compressed modules stay compressed: the guest's kernel decompresses them,
// or devbulk there does (kmod): .ko.gz itself, .ko.xz with busybox's xz
// (when the guest has busybox); .ko.zst it cannot.
func addModules(files map[string]string, k *Kernel, names []string) ([]byte, error) {
	ix, err := kmod.Open(k.Modules)
	if err != nil {
		if ix, err = kmod.Scan(k.Modules, names...); err != nil {
			return nil, fmt.Errorf("kernel modules: %w", err)
		}
	}
	var dep bytes.Buffer
	if err := ix.WriteDep(&dep); err != nil {
		return nil, err
	}
	guestDir := "/lib/modules/" + k.Release
	for _, name := range names {
		deps, err := ix.Files(name)
		if err != nil {
			continue // built in, or not in this kernel: devbulk kinds will say
		}
		for _, f := range deps {
			files[path.Join(guestDir, f)] = filepath.Join(k.Modules, f)
		}
	}
	return dep.Bytes(), nil
}

// rootDirs are the directories every guest has (mount points among them).
var rootDirs = []string{"/bin", "/sbin", "/usr/bin", "/usr/sbin", "/lib", "/lib64", "/proc", "/sys", "/dev", "/run", "/tmp", "/etc"}

// writeDirs writes rootDirs and the parent directories of every path, once
// each, parents first (the kernel's unpacker creates no missing parents).
func writeDirs(cw *cpio.Writer, paths []string) error {
	dirs := map[string]bool{}
	for _, p := range append(paths, rootDirs...) {
		// p itself and its parents; files are taken out below.
		for d := path.Dir(p + "/x"); d != "/" && d != "."; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	for _, p := range paths {
		delete(dirs, p) // a file, not a directory
	}
	sorted := make([]string, 0, len(dirs))
	for d := range dirs {
		sorted = append(sorted, d)
	}
	sort.Strings(sorted)
	for _, d := range sorted {
		if err := cw.WriteHeader(&cpio.Header{Name: d[1:], Mode: cpio.TypeDir | 0o755}); err != nil {
			return err
		}
	}
	return nil
}

func writeFile(cw *cpio.Writer, guestPath, hostPath string) error {
	b, err := os.ReadFile(hostPath)
	if err != nil {
		return err
	}
	st, err := os.Stat(hostPath)
	if err != nil {
		return err
	}
	return writeBytes(cw, guestPath, b, cpio.FileMode(st.Mode().Perm()))
}

func writeBytes(cw *cpio.Writer, guestPath string, b []byte, mode cpio.FileMode) error {
	if err := cw.WriteHeader(&cpio.Header{Name: guestPath[1:], Mode: mode, Size: int64(len(b))}); err != nil {
		return err
	}
	_, err := cw.Write(b)
	return err
}
