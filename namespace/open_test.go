package namespace

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

func TestResolve(t *testing.T) {
	for arg, want := range map[string]string{
		"current":             "/proc/self/ns/net",
		"blue":                "/run/netns/blue",
		"/proc/1/ns/net":      "/proc/1/ns/net",
		"./x/../ns":           "ns",
		"../../proc/1/ns/net": "../../proc/1/ns/net",
	} {
		got, _, err := Resolve(arg)
		if err != nil || got != want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", arg, got, err, want)
		}
	}
	for _, arg := range []string{"", ".", "..", "a\x00b", strings.Repeat("n", 256)} {
		if _, _, err := Resolve(arg); !errors.Is(err, ErrBad) {
			t.Errorf("Resolve(%q) = %v, want ErrBad", arg, err)
		}
	}
}

func FuzzResolve(f *testing.F) {
	for _, s := range []string{"current", "blue", "../../proc/self/ns/net", "/run/netns/x", ".", "", "a/b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, arg string) {
		path, current, err := Resolve(arg)
		if err != nil {
			if !errors.Is(err, ErrBad) {
				t.Fatalf("error %v is not ErrBad", err)
			}
			return
		}
		switch {
		case current != (arg == CurrentName):
			t.Fatalf("%q: current = %v", arg, current)
		case strings.ContainsRune(path, 0):
			t.Fatalf("%q: path %q holds NUL", arg, path)
		case !strings.Contains(arg, "/") && !current && filepath.Dir(path) != Dir:
			// A plain name never leaves /run/netns.
			t.Fatalf("name %q resolved outside %s: %q", arg, Dir, path)
		}
	})
}
