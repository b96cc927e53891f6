package kbuild

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A source spec reads back as written (paths made absolute), its parts in
// order; what names nothing is ErrBad, saying what is wrong.
func TestParse(t *testing.T) {
	dir := t.TempDir()
	tree, patch, cfg, tar := filepath.Join(dir, "linux"), filepath.Join(dir, "fix.patch"), filepath.Join(dir, "my.config"), filepath.Join(dir, "linux.tar.xz")
	at := filepath.Join(dir, "linux@work") // a directory whose name holds @, beside linux
	os.Mkdir(tree, 0o755)
	os.Mkdir(at, 0o755)
	for _, f := range []string{patch, cfg, tar} {
		os.WriteFile(f, nil, 0o644)
	}
	for in, want := range map[string]string{
		"src:" + tree: "src:" + tree,
		"src:" + tree + "@v6.1.192+revert:069daad4f2ae":       "src:" + tree + "@v6.1.192+revert:069daad4f2ae",
		"src:" + tar + "+" + patch + "+config:defconfig":      "src:" + tar + "+" + patch + "+config:defconfig",
		"src:" + tree + "+config:" + cfg + "+fragment:" + cfg: "src:" + tree + "+config:" + cfg + "+fragment:" + cfg,
		"src:" + tree + "+config:devbulk":                     "src:" + tree,
		"src:" + tree + "@origin/linux-6.1.y":                 "src:" + tree + "@origin/linux-6.1.y",
		"src:" + tree + "@HEAD@{1}":                           "src:" + tree + "@HEAD@{1}",
		"src:" + at:                                           "src:" + at,
		"src:" + tree + "+fragment:debug":                     "src:" + tree + "+fragment:debug",
	} {
		s, err := Parse(in)
		if err != nil || s.String() != want {
			t.Errorf("%q: %v, %v; want %q", in, s, err, want)
		}
	}
	for in, text := range map[string]string{
		"src:":                             "want src:PATH",
		"src:" + dir + "/nosuch":           "no such file",
		"src:" + patch:                     "neither a directory nor a source tarball",
		"src:" + tar + "@v1":               "a tarball has no revisions",
		"src:" + tree + "@":                "an empty revision",
		"src:" + tree + "+nosuch.patch":    "no such patch file",
		"src:" + tree + "+config:nosuch":   "no such config file",
		"src:" + tree + "+revert:":         "names no commit",
		"src:" + tree + "++" + patch:       "an empty +part",
		"src:" + tree + "+fragment:" + dir: "no such fragment file",
		"src:" + tree + "+fragment:debugg": "fragment:debug|FILE",
	} {
		if _, err := Parse(in); !errors.Is(err, ErrBad) || !strings.Contains(err.Error(), text) {
			t.Errorf("%q: %v; want ErrBad with %q", in, err, text)
		}
	}
}

// A range names both ends, either spelled out or as git's GOOD..BAD, the
// parts on both; a spec at one revision is not a range.
func TestParseRange(t *testing.T) {
	dir := t.TempDir()
	tree, patch := filepath.Join(dir, "linux"), filepath.Join(dir, "fix.patch")
	os.Mkdir(tree, 0o755)
	os.WriteFile(patch, nil, 0o644)
	for _, in := range []string{"src:" + tree + "@v1..v2+" + patch, "src:" + tree + "@v1+" + patch + "..src:" + tree + "@v2+" + patch} {
		g, b, err := ParseRange(in)
		if err != nil || g.String() != "src:"+tree+"@v1+"+patch || b.String() != "src:"+tree+"@v2+"+patch {
			t.Errorf("%q: %v, %v, %v", in, g, b, err)
		}
	}
	if _, _, err := ParseRange("src:" + tree + "@v1"); !errors.Is(err, ErrBad) || !strings.Contains(err.Error(), "is not a range") {
		t.Errorf("one revision: %v", err)
	}
}
