package vm

import "github.com/devbulk/devbulk/internal/workdir"

// A guest's work directory (initramfs, serial ports) is made under the
// temporary directory with this pattern and an owner file (workdir.Make).
const workDirPattern = "devbulk-vm"

// CleanupWorkDirs removes the guest work directories that killed devbulk
// processes left in the temporary directory, and returns them.
func CleanupWorkDirs() ([]string, error) { return workdir.Cleanup(workDirPattern, nil) }
