package safefs

import (
	"os"
	"path/filepath"
	"testing"
)

// Replace puts the new content in place of the old, and of a symlink
// someone put there, never writing through it.
func TestReplace(t *testing.T) {
	dir := t.TempDir()
	path, target := filepath.Join(dir, "log.json"), filepath.Join(dir, "elsewhere")
	if err := os.WriteFile(target, []byte("theirs"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
	if err := Replace(path, []byte("ours"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	theirs, _ := os.ReadFile(target)
	st, _ := os.Lstat(path)
	if string(got) != "ours" || string(theirs) != "theirs" || !st.Mode().IsRegular() || st.Mode().Perm() != 0o600 {
		t.Errorf("after Replace: %q (%v), the symlink's target %q", got, st.Mode(), theirs)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*.tmp")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}
