// Package safefs checks the directories whose contents decide what devbulk
// deletes or unmounts (run records, kept namespaces, VM work directories):
// only root may be able to put anything there.
package safefs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// ErrUnsafe reports a directory someone other than root could write, or a
// symlink in its place.
var ErrUnsafe = errors.New("unsafe directory")

// Dir checks that dir is a real directory (not a symlink), owned by root
// (or the caller), and not writable by group or others.
func Dir(dir string) error {
	var st unix.Stat_t
	if err := unix.Lstat(dir, &st); err != nil {
		return err
	}
	switch {
	case st.Mode&unix.S_IFMT == unix.S_IFLNK:
		return fmt.Errorf("%w: %s is a symlink", ErrUnsafe, dir)
	case st.Mode&unix.S_IFMT != unix.S_IFDIR:
		return fmt.Errorf("%w: %s is not a directory", ErrUnsafe, dir)
	}
	return onlyRootWrites(dir, &st)
}

// Program checks that path is a regular executable file (not a symlink),
// owned by root (or the caller), not writable by group or others, in a
// directory Dir accepts: a program devbulk runs as root from beside its
// own executable, which only root may have put there.
func Program(path string) error {
	if err := Dir(filepath.Dir(path)); err != nil {
		return err
	}
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return err
	}
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		return fmt.Errorf("%w: %s is not a regular file", ErrUnsafe, path)
	case st.Mode&0o100 == 0:
		return fmt.Errorf("%w: %s is not executable", ErrUnsafe, path)
	}
	return onlyRootWrites(path, &st)
}

// onlyRootWrites checks that path (whose lstat is st) is owned by root (or
// the caller) and not writable by group or others.
func onlyRootWrites(path string, st *unix.Stat_t) error {
	switch {
	case st.Uid != 0 && int(st.Uid) != os.Geteuid():
		return fmt.Errorf("%w: %s is owned by uid %d, not root", ErrUnsafe, path, st.Uid)
	case st.Mode&0o022 != 0:
		return fmt.Errorf("%w: %s is writable by group or others (mode %04o): chmod go-w it", ErrUnsafe, path, st.Mode&0o7777)
	}
	return nil
}
