package check

import (
	"context"

	"github.com/devbulk/devbulk/vm"
)

// RunAndCompare is one whole check. With no kernels, it runs the suite
// here (its vm scenarios in o.VM) and compares the results with base (nil:
// summaries only). With kernels, it runs the whole suite in the VM on each
// in turn, and compares the second kernel's results with the first's
// (base is then not used).
//
// It returns the results of every kernel that finished, in order, and the
// comparison; when ctx ends it stops, returns ctx's error, and the
// comparison covers what finished, or is nil when that is not enough to
// compare.
func RunAndCompare(ctx context.Context, s *Suite, kernels []*vm.Kernel, base *Results, thresholdPct float64, o RunOptions) (*Report, []*Results, error) {
	targets := kernels
	if len(targets) == 0 {
		targets = []*vm.Kernel{nil} // here
	}
	var results []*Results
	var err error
	for _, k := range targets {
		if k != nil {
			o.VM, o.AllInVM = k, true
		}
		var r *Results
		r, err = Run(ctx, s, o)
		if r != nil {
			results = append(results, r)
		}
		if err != nil {
			break
		}
	}
	switch {
	case len(kernels) >= 2 && len(results) == len(kernels):
		return Compare(results[0], results[1], thresholdPct), results, err
	case len(kernels) < 2 && len(results) == 1:
		return Compare(base, results[0], thresholdPct), results, err
	}
	return nil, results, err
}
