package lava

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/devbulk/devbulk/check"
)

// Saved is what a file of check's results holds: one kernel matrix (check
// --format json of several kernels), or one run.
type Saved struct {
	Matrix *check.Matrix
	Run    *check.Results
	// Damaged says why a job's log did not give its whole results document
	// (the run was read from its test cases instead); "" otherwise.
	Damaged string
}

// maxSaved bounds what ReadSaved reads: a default-suite job's log is
// ~160 KB; /dev/zero is not a log. (A variable: its test reads a smaller
// bound's worth, not 256 MiB under the race detector.)
var maxSaved = 256 << 20

// ReadSaved reads a file of check's results, whatever form it came in: a
// kernel matrix, a results document (check --save), a LAVA job's log or a
// server's results export (ReadRun). A run read from an export, which names
// neither kernel nor label, is labelled with the file's name.
func ReadSaved(path string) (Saved, error) {
	b, err := readBounded(path)
	if err != nil {
		return Saved{}, err
	}
	if m, err := check.ReadMatrix(bytes.NewReader(b)); err == nil {
		return Saved{Matrix: m}, nil
	}
	r, damaged, err := ReadRun(b)
	if err != nil {
		return Saved{}, err
	}
	if r.Meta.Label == "" && r.Meta.Kernel == UnknownKernel {
		r.Meta.Label = filepath.Base(path) // an export: its column is its file
	}
	return Saved{Run: r, Damaged: damaged}, nil
}

func readBounded(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, int64(maxSaved)+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxSaved {
		return nil, fmt.Errorf("larger than %d MiB: not a log or results devbulk reads", maxSaved>>20)
	}
	return b, nil
}
