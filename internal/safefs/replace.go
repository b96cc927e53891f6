package safefs

import (
	"os"
	"path/filepath"
)

// Replace writes data to path whole or not at all: into a new temporary
// file beside it (created exclusively, so a file or symlink someone placed
// is never written through), synced, then renamed over path. A crash
// leaves the old file or the new one, never a torn one.
func Replace(path string, data []byte, perm os.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(perm)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}
