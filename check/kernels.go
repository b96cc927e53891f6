package check

import (
	"context"

	"github.com/devbulk/devbulk/vm"
)

// Baseline is what a run is compared with: a run's results (nil:
// summaries only) and the slowdown, in percent, that counts as a
// regression.
type Baseline struct {
	Results      *Results
	ThresholdPct float64
}

// RunAndCompare is one whole check of one kernel: the suite here (its vm
// scenarios in o.VM), or, with a kernel, all of it in the VM on that
// kernel, compared with base. It returns the results and the comparison;
// when ctx ends it stops, returns ctx's error, and the comparison covers
// what finished. Several kernels are a Matrix.
func RunAndCompare(ctx context.Context, s *Suite, kernel *vm.Kernel, base Baseline, o RunOptions) (*Report, *Results, error) {
	if kernel != nil {
		o.VM, o.AllInVM = kernel, true
	}
	r, err := Run(ctx, s, o)
	if r == nil {
		return nil, nil, err
	}
	return Compare(base.Results, r, base.ThresholdPct), r, err
}
