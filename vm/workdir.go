package vm

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/devbulk/devbulk/internal/owner"
	"github.com/devbulk/devbulk/internal/safefs"
)

// A guest's work directory (initramfs, serial ports) is made under the
// temporary directory with this pattern and an owner file, so that
// CleanupWorkDirs can tell a killed devbulk's from a running one's.
const (
	workDirPattern = "devbulk-vm"
	ownerFile      = "owner"
)

// CleanupWorkDirs removes the guest work directories that killed devbulk
// processes left in the temporary directory, and returns them. A directory
// without devbulk's owner file, or one others could write (safefs.Dir), is
// left.
func CleanupWorkDirs() ([]string, error) {
	matches, err := filepath.Glob(filepath.Join(os.TempDir(), workDirPattern+"*"))
	if err != nil {
		return nil, err
	}
	var done []string
	var errs []error
	for _, dir := range matches {
		if safefs.Dir(dir) != nil { // MkdirTemp makes 0700 directories
			continue
		}
		if strings.Contains(filepath.Base(dir), ".") {
			continue // not a MkdirTemp name
		}
		o, err := owner.Read(filepath.Join(dir, ownerFile))
		if err != nil || o.Alive() {
			continue
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
