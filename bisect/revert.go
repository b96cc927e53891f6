package bisect

import (
	"context"
	"errors"
	"fmt"
	"slices"
)

// RevertCheck is KernelCI's confirmation of a culprit: the bad end with
// the first bad commit reverted, measured beside the last good kernel and
// the bad end, alternating. It restores the good figures when it does not
// differ significantly from the last good kernel and does from the bad end.
type RevertCheck struct {
	Spec     string `json:"spec"`
	VsGood   Change `json:"vs_good"`
	VsBad    Change `json:"vs_bad"`
	Restores bool   `json:"restores"`
	// Err says why the revert could not be measured (it does not apply on
	// the bad end, does not build, or does not boot): the culprit stands,
	// unconfirmed by its revert.
	Err string `json:"error,omitempty"`
	// Samples are the three kernels' own, by "good", "bad" and "revert".
	Samples map[string]map[string][]float64 `json:"samples"`
}

// The revert's index beside Specs' (boot takes an index).
func (b *bisection) revertIndex() int { return len(b.o.Specs) }

// spec is the configuration at index k: one of Specs, or the revert.
func (b *bisection) spec(k int) string {
	if k == b.revertIndex() {
		return b.r.Revert.Spec
	}
	return b.o.Specs[k]
}

// revert measures, when the list is of commits (Options.Revert names the
// bad end with the first bad one reverted), the three side by side.
func (b *bisection) revert(ctx context.Context) error {
	if b.o.Revert == nil {
		return nil
	}
	spec := b.o.Revert(b.o.Specs[b.r.FirstBad])
	if spec == "" {
		return nil
	}
	b.r.Revert = &RevertCheck{Spec: spec}
	got := map[int]map[string][]float64{}
	trio := []int{b.r.LastGood, len(b.o.Specs) - 1, b.revertIndex()}
	for i := range b.o.ConfirmBoots {
		order := slices.Clone(trio)
		if i%2 == 1 {
			slices.Reverse(order)
		}
		for _, k := range order {
			err := b.boot(ctx, "revert", k, got)
			if errors.Is(err, ErrNoBoot) {
				b.r.Revert.Err = fmt.Sprintf("%s: %v", b.spec(k), err)
				return nil
			}
			if err != nil {
				return fmt.Errorf("the bad end with %s reverted, beside the ends: %s: %w", b.o.Specs[b.r.FirstBad], b.spec(k), err)
			}
		}
	}
	rc := b.r.Revert
	rc.Samples = map[string]map[string][]float64{"good": got[trio[0]], "bad": got[trio[1]], "revert": got[trio[2]]}
	var err error
	if rc.VsGood, err = Compare(got[trio[0]][b.r.Metric], got[trio[2]][b.r.Metric], b.o.ThresholdPct); err != nil {
		return err
	}
	if rc.VsBad, err = Compare(got[trio[1]][b.r.Metric], got[trio[2]][b.r.Metric], b.o.ThresholdPct); err != nil {
		return err
	}
	// Back where the good kernel was, and away from the bad end in the
	// direction opposite to the regression's.
	rc.Restores = !rc.VsGood.Significant && rc.VsBad.Significant && (rc.VsBad.Ratio < 1) == (b.r.Ends.Ratio > 1)
	return nil
}

// revertWords says what the revert showed, for Words.
func (r *Result) revertWords() string {
	rc := r.Revert
	if rc == nil {
		return ""
	}
	if rc.Err != "" {
		return "; its revert could not be measured (" + rc.Err + ")"
	}
	if rc.Samples == nil {
		return "; the revert was not measured to the end"
	}
	verdict := "restores the good figures"
	if !rc.Restores {
		verdict = "does NOT restore the good figures"
	}
	return fmt.Sprintf("; the bad end with it reverted %s: against the last good %s, against the bad end %s", verdict, rc.VsGood, rc.VsBad)
}
