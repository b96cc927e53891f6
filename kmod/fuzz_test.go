package kmod

import (
	"bytes"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// What ParseDep accepts names only files under the directory, each module
// loads itself last, and the index reads back the same after WriteDep.
func FuzzParseDep(f *testing.F) {
	f.Add([]byte("kernel/net/8021q/8021q.ko: kernel/net/802/garp.ko kernel/net/llc/llc.ko\nkernel/net/llc/llc.ko:\n"))
	f.Add([]byte("kernel/drivers/net/dummy.ko.xz:\n"))
	f.Add([]byte("../../../tmp/evil.ko:\n/abs/x.ko: y.ko\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		ix, err := ParseDep("/lib/modules/x", bytes.NewReader(b))
		if err != nil {
			return
		}
		for name, entry := range ix.deps {
			files, err := ix.Files(name)
			if err != nil || files[len(files)-1] != entry[0] {
				t.Fatalf("%s: files %v, %v", name, files, err)
			}
			for _, f := range files {
				if !filepath.IsLocal(f) {
					t.Fatalf("%s: %q escapes the module directory", name, f)
				}
			}
		}
		var out bytes.Buffer
		if err := ix.WriteDep(&out); err != nil {
			t.Fatal(err)
		}
		again, err := ParseDep("/lib/modules/x", &out)
		if err != nil || len(again.deps) != len(ix.deps) {
			t.Fatalf("written index does not read back: %v\n%s", err, out.String())
		}
		for name, entry := range ix.deps {
			if !slices.Equal(again.deps[name], entry) {
				t.Fatalf("%s: %v became %v", name, entry, again.deps[name])
			}
		}
	})
}

func FuzzParseModinfo(f *testing.F) {
	f.Add([]byte("license=GPL\x00depends=garp,mrp,stp,llc\x00name=8021q\x00"))
	f.Add([]byte("depends=\x00"))
	f.Add([]byte("depends=,,a,\x00depends=b"))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, d := range parseModinfo(b) {
			if d == "" || strings.ContainsAny(d, ",\x00") {
				t.Fatalf("module name %q from %q", d, b)
			}
		}
	})
}
