// Package workdir makes the temporary directories devbulk works in (a
// guest's initramfs and serial ports, a LAVA job's device and log) with an
// owner file, so that devbulk cleanup can tell a killed devbulk's from a
// running one's and remove only the former.
package workdir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/devbulk/devbulk/internal/owner"
	"github.com/devbulk/devbulk/internal/safefs"
)

// ownerFile names the owner in a work directory.
const ownerFile = "owner"

// Make makes a work directory under the temporary directory, named
// pattern and random digits, owned by this process.
func Make(pattern string) (string, error) {
	dir, err := os.MkdirTemp("", pattern)
	if err != nil {
		return "", err
	}
	if err := owner.Write(filepath.Join(dir, ownerFile)); err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	return dir, nil
}

// Live lists the work directories of pattern whose owner still runs.
func Live(pattern string) []string {
	var out []string
	for _, dir := range candidates(pattern) {
		if o, err := owner.Read(filepath.Join(dir, ownerFile)); err == nil && o.Alive() {
			out = append(out, dir)
		}
	}
	return out
}

// candidates are the directories of pattern that devbulk may have made:
// MkdirTemp's names, writable by their owner only (safefs.Dir).
func candidates(pattern string) []string {
	matches, _ := filepath.Glob(filepath.Join(os.TempDir(), pattern+"*"))
	var out []string
	for _, dir := range matches {
		if mkdirTempName(filepath.Base(dir), pattern) && safefs.Dir(dir) == nil {
			out = append(out, dir)
		}
	}
	return out
}

// Cleanup removes the work directories of pattern that killed devbulk
// processes left, and returns them; before, when set, runs first on each
// (to remove what the directory says was made elsewhere). A directory
// without devbulk's owner file, or one others could write (safefs.Dir), is
// left.
func Cleanup(pattern string, before func(dir string) error) ([]string, error) {
	var done []string
	var errs []error
	for _, dir := range candidates(pattern) {
		o, err := owner.Read(filepath.Join(dir, ownerFile))
		if err != nil || o.Alive() {
			continue
		}
		if before != nil {
			if err := before(dir); err != nil {
				errs = append(errs, err)
				continue
			}
		}
		// RemoveAll removes symlinks inside, never what they point to.
		if err := os.RemoveAll(dir); err != nil {
			errs = append(errs, fmt.Errorf("removing %s: %w", dir, err))
			continue
		}
		done = append(done, dir)
	}
	return done, errors.Join(errs...)
}

// mkdirTempName reports whether name is one os.MkdirTemp makes of pattern:
// the pattern, then decimal digits.
func mkdirTempName(name, pattern string) bool {
	digits, ok := strings.CutPrefix(name, pattern)
	return ok && digits != "" && strings.Trim(digits, "0123456789") == ""
}
