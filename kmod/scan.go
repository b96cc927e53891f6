package kmod

import (
	"bufio"
	"debug/elf"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
)

// Scan builds the index of a module directory that has no modules.dep (a
// kernel package before depmod ran) from each module's .modinfo "depends=".
// Only uncompressed .ko files can be read: a directory with compressed ones
// is refused, as is one with no module at all.
func Scan(dir string) (*Index, error) {
	direct := map[string][]string{} // name → names it depends on
	files := map[string]string{}    // name → file relative to dir
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if strings.Contains(filepath.Base(p), ".ko.") {
			return fmt.Errorf("%s: compressed modules need a modules.dep (run depmod)", p)
		}
		if !strings.HasSuffix(p, ".ko") {
			return nil
		}
		deps, err := modinfoDepends(p)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		rel, _ := filepath.Rel(dir, p)
		files[Name(rel)] = rel
		direct[Name(rel)] = deps
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no kernel modules under %s", dir)
	}
	ix := &Index{dir: dir, deps: map[string][]string{}}
	for name, file := range files {
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
		entry := []string{file}
		for i := len(order) - 1; i >= 0; i-- {
			entry = append(entry, order[i])
		}
		ix.deps[name] = entry
	}
	return ix, nil
}

// modinfoDepends reads the depends= field of a module's .modinfo section.
func modinfoDepends(path string) ([]string, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s := f.Section(".modinfo")
	if s == nil {
		return nil, nil
	}
	b, err := s.Data()
	if err != nil {
		return nil, err
	}
	return parseModinfo(b), nil
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
