package kmod

import (
	"bufio"
	"bytes"
	"debug/elf"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
)

// Scan builds the index of a module directory that has no modules.dep (a
// kernel package before depmod ran) from each module's .modinfo "depends=",
// read through the decompressor where modules are compressed (.ko.xz,
// .ko.zst, .ko.gz: Debian's 6.12 packages). With names, only those modules
// and what they depend on are read (decompressing a whole tree of xz
// modules takes a minute); without, every module. Names with no file
// (built into the kernel) are left out of the index. A directory with no
// module at all is refused.
func Scan(dir string, names ...string) (*Index, error) {
	files := map[string]string{} // name → file relative to dir
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if _, ok := compression(p); ok {
			rel, _ := filepath.Rel(dir, p)
			files[Name(rel)] = rel
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no kernel modules under %s", dir)
	}
	if len(names) == 0 {
		for name := range files {
			names = append(names, name)
		}
	}
	direct := map[string][]string{} // name → names it depends on
	var read func(name string) error
	read = func(name string) error {
		if _, done := direct[name]; done {
			return nil
		}
		file, ok := files[name]
		if !ok {
			return nil // built in
		}
		deps, err := modinfoDepends(filepath.Join(dir, file))
		if err != nil {
			return err
		}
		direct[name] = deps
		for _, d := range deps {
			if err := read(d); err != nil {
				return err
			}
		}
		return nil
	}
	for _, name := range names {
		if err := read(name); err != nil {
			return nil, err
		}
	}
	ix := &Index{dir: dir, deps: map[string][]string{}}
	for name := range direct {
		var order []string // dependencies, each after what it needs
		seen := map[string]bool{name: true}
		var visit func(string)
		visit = func(n string) {
			for _, d := range direct[n] {
				if !seen[d] {
					seen[d] = true
					visit(d)
					if f, ok := files[d]; ok {
						order = append(order, f)
					}
				}
			}
		}
		visit(name)
		// modules.dep lists dependencies last-loaded-first.
		entry := []string{files[name]}
		for i := len(order) - 1; i >= 0; i-- {
			entry = append(entry, order[i])
		}
		ix.deps[name] = entry
	}
	return ix, nil
}

// modinfoDepends reads the depends= field of a module's .modinfo section.
func modinfoDepends(path string) ([]string, error) {
	b, err := readModule(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	s := f.Section(".modinfo")
	if s == nil {
		return nil, nil
	}
	info, err := s.Data()
	if err != nil {
		return nil, err
	}
	return parseModinfo(info), nil
}

// parseModinfo returns the module names of the depends= field of a
// .modinfo section (NUL-separated key=value strings); empty names dropped.
func parseModinfo(b []byte) []string {
	for _, field := range strings.Split(string(b), "\x00") {
		if v, ok := strings.CutPrefix(field, "depends="); ok {
			var out []string
			for _, d := range strings.Split(v, ",") {
				if d != "" {
					out = append(out, d)
				}
			}
			return out
		}
	}
	return nil
}

// WriteDep writes the index in modules.dep format.
func (ix *Index) WriteDep(w io.Writer) error {
	names := make([]string, 0, len(ix.deps))
	for n := range ix.deps {
		names = append(names, n)
	}
	sort.Strings(names)
	bw := bufio.NewWriter(w)
	for _, n := range names {
		e := ix.deps[n]
		fmt.Fprintf(bw, "%s:", e[0])
		for _, d := range e[1:] {
			fmt.Fprintf(bw, " %s", d)
		}
		bw.WriteString("\n")
	}
	return bw.Flush()
}
