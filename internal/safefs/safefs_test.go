package safefs

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// A program beside devbulk is run only when it is a regular executable
// file that neither group nor others can write, in such a directory.
func TestProgram(t *testing.T) {
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	file := func(name string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil { // not under the umask
			t.Fatal(err)
		}
		return p
	}
	good := file("good", 0o755)
	if err := Program(good); err != nil {
		t.Errorf("good: %v", err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(good, link); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{file("writable", 0o777), file("groupw", 0o775), file("plain", 0o644), link, dir, filepath.Join(dir, "none")} {
		if err := Program(p); err == nil {
			t.Errorf("%s accepted", filepath.Base(p))
		}
	}
	open := t.TempDir()
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(open, "prog")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := Program(p); !errors.Is(err, ErrUnsafe) {
		t.Errorf("in a directory anyone can write: %v", err)
	}
}
