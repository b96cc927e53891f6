package check

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/devbulk/devbulk/bisect"
	"github.com/devbulk/devbulk/kbuild"
	"github.com/devbulk/devbulk/kernlog"
	"github.com/devbulk/devbulk/vm"
)

// Measurer measures one scenario in devbulk's VM on each kernel a
// bisection boots: check's bisect.Measurer.
type Measurer struct {
	Scenario ScenarioSpec
	// Kernel finds the kernel a spec names: fetched, found, or built from
	// source (vm.FindBuilding).
	Kernel func(ctx context.Context, spec string) (*vm.Kernel, error)
	// Complained, when set, is told what the kernel complained of during a
	// boot (its findings): a bisection decides by figures, and says these
	// beside its answer.
	Complained func(spec string, findings []kernlog.Finding)
}

// Measure boots the kernel spec names and runs the scenario there, within
// timeout, and returns its ns/op values by benchmark. A kernel that does
// not build, or on which a patch or revert does not apply, did not boot,
// or hung, or skipped the scenario, is bisect.ErrNoBoot: git bisect's
// "cannot test", a skip.
func (m Measurer) Measure(ctx context.Context, spec string, timeout time.Duration) (map[string][]float64, error) {
	k, err := m.Kernel(ctx, spec)
	if errors.Is(err, kbuild.ErrBuild) || errors.Is(err, kbuild.ErrStep) {
		return nil, fmt.Errorf("%w: %v", bisect.ErrNoBoot, err)
	}
	if err != nil {
		return nil, fmt.Errorf("kernel %s: %w", spec, err) // this machine's (apt, disk), not the kernel's: not a skip
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	r, err := Run(ctx, &Suite{Name: "bisect", Scenarios: []ScenarioSpec{m.Scenario}}, RunOptions{VM: k, AllInVM: true, SkipUnbootable: true})
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return nil, fmt.Errorf("%w: hung: no answer within %s", bisect.ErrNoBoot, timeout.Round(time.Second))
	case err != nil:
		return nil, err
	case len(r.Scenarios) != 1:
		return nil, fmt.Errorf("%w: no results", bisect.ErrNoBoot)
	}
	if f := r.Scenarios[0].Findings; len(f) > 0 && m.Complained != nil {
		m.Complained(spec, f)
	}
	switch {
	case r.Scenarios[0].Skip != "" || r.Scenarios[0].Error != "":
		return nil, fmt.Errorf("%w: %s%s", bisect.ErrNoBoot, r.Scenarios[0].Skip, r.Scenarios[0].Error)
	}
	out := map[string][]float64{}
	for _, l := range r.Scenarios[0].Lines {
		for _, v := range l.Values {
			if v.Unit == UnitNsPerOp {
				out[l.Name] = append(out[l.Name], v.Value)
			}
		}
	}
	return out, nil
}
