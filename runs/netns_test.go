package runs

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

func TestNetnsPath(t *testing.T) {
	for arg, want := range map[string]string{
		"current":             "/proc/self/ns/net",
		"blue":                "/run/netns/blue",
		"/proc/1/ns/net":      "/proc/1/ns/net",
		"./x/../ns":           "ns",
		"../../proc/1/ns/net": "../../proc/1/ns/net",
	} {
		got, _, err := netnsPath(arg)
		if err != nil || got != want {
			t.Errorf("netnsPath(%q) = %q, %v; want %q", arg, got, err, want)
		}
	}
	for _, arg := range []string{"", ".", "..", "a\x00b", strings.Repeat("n", 256)} {
		if _, _, err := netnsPath(arg); !errors.Is(err, ErrBadNetns) {
			t.Errorf("netnsPath(%q) = %v, want ErrBadNetns", arg, err)
		}
	}
}

func FuzzNetnsPath(f *testing.F) {
	for _, s := range []string{"current", "blue", "../../proc/self/ns/net", "/run/netns/x", ".", "", "a/b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, arg string) {
		path, current, err := netnsPath(arg)
		if err != nil {
			if !errors.Is(err, ErrBadNetns) {
				t.Fatalf("error %v is not ErrBadNetns", err)
			}
			return
		}
		switch {
		case current != (arg == Current):
			t.Fatalf("%q: current = %v", arg, current)
		case strings.ContainsRune(path, 0):
			t.Fatalf("%q: path %q holds NUL", arg, path)
		case !strings.Contains(arg, "/") && !current && filepath.Dir(path) != NetnsDir:
			// A plain name never leaves /run/netns.
			t.Fatalf("name %q resolved outside %s: %q", arg, NetnsDir, path)
		}
	})
}
