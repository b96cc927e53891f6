package kmod

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"
)

// moduleELF is the smallest ELF relocatable a module scan reads: a header
// and two sections, .modinfo (NUL-separated key=value strings) and the
// section names.
func moduleELF(modinfo string) []byte {
	shstr := "\x00.modinfo\x00.shstrtab\x00"
	var b bytes.Buffer
	le := binary.LittleEndian
	w := func(v any) { _ = binary.Write(&b, le, v) }
	infoOff := uint64(64)
	strOff := infoOff + uint64(len(modinfo))
	shOff := (strOff + uint64(len(shstr)) + 7) &^ 7
	b.Write([]byte{0x7f, 'E', 'L', 'F', 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	w(uint16(1))  // ET_REL
	w(uint16(62)) // EM_X86_64
	w(uint32(1))
	w(uint64(0)) // entry
	w(uint64(0)) // phoff
	w(shOff)
	w(uint32(0))
	w(uint16(64)) // ehsize
	w(uint16(0))
	w(uint16(0))
	w(uint16(64)) // shentsize
	w(uint16(3))  // shnum
	w(uint16(2))  // shstrndx
	b.WriteString(modinfo)
	b.WriteString(shstr)
	b.Write(make([]byte, int(shOff)-b.Len()))
	section := func(name, typ uint32, off, size uint64) {
		w(name)
		w(typ)
		w(uint64(0)) // flags
		w(uint64(0)) // addr
		w(off)
		w(size)
		w(uint32(0))
		w(uint32(0))
		w(uint64(1)) // addralign
		w(uint64(0))
	}
	section(0, 0, 0, 0)
	section(1, 1, infoOff, uint64(len(modinfo))) // .modinfo, SHT_PROGBITS
	section(10, 3, strOff, uint64(len(shstr)))   // .shstrtab, SHT_STRTAB
	return b.Bytes()
}

func compress(t *testing.T, suffix string, plain []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	switch suffix {
	case "":
		return plain
	case ".xz":
		w, err := xz.NewWriter(&b)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(plain)
		w.Close()
	case ".zst":
		w, err := zstd.NewWriter(&b)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(plain)
		w.Close()
	case ".gz":
		w := gzip.NewWriter(&b)
		w.Write(plain)
		w.Close()
	}
	return b.Bytes()
}

// A module tree without modules.dep, compressed as Debian's 6.12 (xz) or
// with zstd or gzip, or not at all, is indexed from each module's .modinfo
// read through the decompressor: 8021q after llc, stp, garp and mrp, as
// modules.dep would order them.
func TestScanCompressedModules(t *testing.T) {
	for _, suffix := range []string{"", ".xz", ".zst", ".gz"} {
		t.Run("ko"+suffix, func(t *testing.T) {
			if p, ok := decompressors[suffix]; ok {
				needProgram(t, p.program)
			}
			dir := t.TempDir()
			mods := map[string]string{
				"kernel/net/llc/llc.ko":       "",
				"kernel/net/802/stp.ko":       "llc",
				"kernel/net/802/garp.ko":      "stp,llc",
				"kernel/net/802/mrp.ko":       "",
				"kernel/net/8021q/8021q.ko":   "garp,mrp",
				"kernel/drivers/net/dummy.ko": "",
			}
			for file, deps := range mods {
				p := filepath.Join(dir, file+suffix)
				os.MkdirAll(filepath.Dir(p), 0o755)
				elf := moduleELF("license=GPL\x00depends=" + deps + "\x00name=" + Name(file) + "\x00")
				if err := os.WriteFile(p, compress(t, suffix, elf), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			ix, err := Scan(dir)
			if err != nil {
				t.Fatal(err)
			}
			// Only what 8021q needs: dummy is not read, a built-in
			// module (no file) is left out.
			some, err := Scan(dir, "8021q", "bridge")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := some.Files("dummy"); err == nil {
				t.Error("a scan for 8021q indexed dummy")
			}
			if f, err := some.Files("8021q"); err != nil || len(f) != 5 {
				t.Errorf("a scan for 8021q: %v, %v", f, err)
			}
			got, err := ix.Files("8021q")
			if err != nil {
				t.Fatal(err)
			}
			for i := range got {
				got[i] = strings.TrimSuffix(got[i], suffix)
			}
			want := []string{"kernel/net/llc/llc.ko", "kernel/net/802/stp.ko", "kernel/net/802/garp.ko", "kernel/net/802/mrp.ko", "kernel/net/8021q/8021q.ko"}
			if !slices.Equal(got, want) {
				t.Errorf("8021q loads %v, want %v", got, want)
			}
			if f, err := ix.Files("dummy"); err != nil || len(f) != 1 || f[0] != "kernel/drivers/net/dummy.ko"+suffix {
				t.Errorf("dummy: %v, %v", f, err)
			}
		})
	}
}

// A file that claims to be compressed but is not is an error that names
// it, not a module without dependencies.
func TestScanRefusesCorruptModules(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "dummy.ko.xz"), []byte("not xz"), 0o644); err != nil {
		t.Fatal(err)
	}
	needProgram(t, "xz")
	if _, err := Scan(dir); err == nil || !strings.Contains(err.Error(), "dummy.ko.xz") || !strings.Contains(err.Error(), "xz -dc") {
		t.Errorf("got %v, want xz's refusal of dummy.ko.xz", err)
	}
}

// needProgram skips a test that decompresses with a program not installed
// (CI installs them: tests/run-all.sh).
func needProgram(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Skipf("%s not installed", name)
	}
}

// A module compressed to more than maxModuleSize decompressed is refused
// (the decompressor killed at the bound), and a symlinked module is read
// as its target (zstd ignores symlinks it is given by name).
func TestReadModuleBoundsAndSymlinks(t *testing.T) {
	needProgram(t, "zstd")
	dir := t.TempDir()
	defer func(was int64) { maxModuleSize = was }(maxModuleSize)
	maxModuleSize = 1 << 20
	big := filepath.Join(dir, "big.ko.zst")
	if err := os.WriteFile(big, compress(t, ".zst", make([]byte, maxModuleSize+1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := readModule(big); err == nil || !strings.Contains(err.Error(), "more than 1 MiB decompressed") {
		t.Errorf("big: %v, want the bound", err)
	}
	small, link := filepath.Join(dir, "small.ko.zst"), filepath.Join(dir, "link.ko.zst")
	if err := os.WriteFile(small, compress(t, ".zst", []byte("module")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(small, link); err != nil {
		t.Fatal(err)
	}
	if b, err := readModule(link); err != nil || string(b) != "module" {
		t.Errorf("symlinked: %q, %v", b, err)
	}
}

// Without the decompressor program, reading a compressed module says which
// program and package it needs.
func TestReadModuleNamesTheMissingDecompressor(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "dummy.ko.zst")
	if err := os.WriteFile(path, compress(t, ".zst", []byte("x")), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", t.TempDir())
	if _, err := readModule(path); err == nil || !strings.Contains(err.Error(), "needs zstd (Debian package zstd)") {
		t.Errorf("got %v, want the program and package named", err)
	}
}
