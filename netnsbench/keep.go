package netnsbench

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/vishvananda/netns"

	"github.com/devbulk/devbulk"
	"github.com/devbulk/devbulk/internal/nsthread"
)

// KeepOptions describe `netns create`: Count namespaces made one after
// the other and all kept, each bind-mounted under o.MountDir, with a veth
// pair to the run's parent namespace when Veth; then all released.
type KeepOptions struct {
	Count int
	Veth  bool
	// Step is the rate curve's step in namespaces (default Count/20, at
	// least 1).
	Step        int
	SampleEvery time.Duration
	// Counter, when set, makes a counter of the namespaces created.
	Counter func(label string, total int) func(done int)
	// MountDir is where the kept namespaces are bind-mounted (""
	// DefaultMountDir); Cleanup(MountDir) removes a killed run's.
	MountDir string
	// Profile breaks the cleanup worker's time down (see ChurnOptions).
	Profile bool
}

// Check refuses options out of range, before anything is made.
func (o KeepOptions) Check() error {
	if o.Step < 0 || o.Step > o.Count {
		return fmt.Errorf("step %d out of range: 1..%d (the count)", o.Step, o.Count)
	}
	alive := o.Count // and the veth peers' parent
	if o.Veth {
		alive++
	}
	return CheckCount(o.Count, alive)
}

// Keep makes and keeps o.Count namespaces, recording the creation rate
// every o.Step, then releases them all and measures the drain. Whatever it
// made is released before it returns, on error and on cancellation too; a
// devbulk killed meanwhile leaves mounts that Cleanup removes.
func Keep(ctx context.Context, o KeepOptions) (*Report, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	step := o.Step
	if step <= 0 {
		step = max(1, o.Count/20)
	}
	parent := netns.None()
	if o.Veth {
		var err error
		if parent, err = nsthread.New(); err != nil {
			return nil, err
		}
		defer parent.Close()
	}
	prof, err := newProfiler(o.Profile, o.Count)
	if err != nil {
		return nil, err
	}
	m, err := newMountRun(mountDir(o.MountDir))
	if err != nil {
		return nil, err
	}
	r := &Report{Header: devbulk.NewHeader(), Scenario: "create"}
	run := Run{Mode: "direct", Workers: 1, PerWorker: o.Count, Namespaces: o.Count, Payload: "none"}
	if o.Veth {
		run.Payload = "veth"
	}
	var created, released atomic.Int64
	body := func() error {
		start, last := time.Now(), time.Now()
		// Counted once mounted: release unmounts what was counted.
		err := inFreshNamespaces(ctx, o.Count, nil, nil, func(i int) error {
			if err := m.keep(i); err != nil {
				return err
			}
			created.Add(1)
			if o.Veth {
				if err := vethToParent(parent, i); err != nil {
					return err
				}
			}
			if n := int(created.Load()); n%step == 0 || n == o.Count {
				now := time.Now()
				run.Rate = append(run.Rate, RatePoint{Created: n, TNS: now.Sub(start).Nanoseconds(),
					NetnsPerSec: float64(n-prevCreated(run.Rate)) / now.Sub(last).Seconds()})
				last = now
			}
			return nil
		})
		return errors.Join(err, ctx.Err())
	}
	release := func() error {
		for i := range int(created.Load()) {
			if err := m.release(i); err != nil {
				return err
			}
			released.Add(1)
		}
		return nil
	}
	err = measure(ctx, &run, body, release, &created, &released, o.SampleEvery, counter(o.Counter, "create", o.Count), prof)
	if _, rerr := m.remove(); rerr != nil { // after a failed release: whatever is left
		err = errors.Join(err, rerr)
	}
	r.Runs = append(r.Runs, run)
	return r, err
}

func prevCreated(rate []RatePoint) int {
	if len(rate) == 0 {
		return 0
	}
	return rate[len(rate)-1].Created
}
