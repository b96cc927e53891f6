package vm

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strings"
)

// A file: one kernel configuration a line, 'K [ARGS]' as --vm-kernel takes
// them (# comments), first good, last bad. It takes any argument the
// sources before it did not.
var fileList = &listSource{form: "FILE, one kernel configuration a line",
	accepts: func(string) bool { return true },
	list:    readKernels,
}

// readKernels reads a list of kernel configurations: at least two, no two
// alike.
func readKernels(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, badSpec{fmt.Errorf("--kernels: %w", err)}
	}
	defer f.Close()
	var specs []string
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		spec := strings.Join(strings.Fields(strings.SplitN(sc.Text(), "#", 2)[0]), " ")
		switch {
		case spec == "":
			continue
		case slices.Contains(specs, spec):
			return nil, badSpec{fmt.Errorf("--kernels %s: line %d: %q is in the list twice", path, line, spec)}
		}
		specs = append(specs, spec)
	}
	if err := sc.Err(); err != nil {
		return nil, badSpec{fmt.Errorf("--kernels %s: %w", path, err)}
	}
	if len(specs) < 2 {
		return nil, badSpec{fmt.Errorf("--kernels %s: %d kernel configurations; a bisection needs at least two (the first good, the last bad)", path, len(specs))}
	}
	return specs, nil
}
