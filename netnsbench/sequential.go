package netnsbench

import (
	"context"
	"fmt"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/devbulk/devbulk"
	"github.com/devbulk/devbulk/namespace"
)

// SequentialOptions describe the single-threaded loop: Count namespaces;
// Profile as ChurnOptions'.
type SequentialOptions struct {
	Count   int
	Profile bool
	// Counter, when set, makes a counter of the namespaces created.
	Counter func(label string, total int) func(done int)
}

// Sequential is the single-threaded `unshare -n` loop: one thread makes n
// namespaces one after the other; each unshare releases the previous one.
// CreateNS and the CPU time are the creation loop; DrainNS the dismantling
// that the loop left to the kernel.
func Sequential(ctx context.Context, o SequentialOptions) (*Report, error) {
	n := o.Count
	if err := CheckCount(n, 1); err != nil {
		return nil, err
	}
	prof, err := newProfiler(o.Profile, n)
	if err != nil {
		return nil, err
	}
	r := &Report{Header: devbulk.NewHeader(), Scenario: "sequential"}
	run := Run{Mode: "direct", Workers: 1, PerWorker: n, Namespaces: n, Payload: "none"}
	var created, released atomic.Int64
	body := func() error {
		return namespace.Run(namespace.Current, func() error {
			for i := 0; i < n && ctx.Err() == nil; i++ {
				if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
					return fmt.Errorf("unshare(CLONE_NEWNET): %w", err)
				}
				if created.Add(1) > 1 {
					released.Add(1)
				}
			}
			return ctx.Err()
		}) // the thread goes home: the last namespace is released
	}
	err = measure(ctx, &run, steps{body: func() error {
		err := body()
		released.Store(created.Load())
		return err
	}, drained: maker(o.Counter, "drain"), created: &created, released: &released,
		progress: counter(o.Counter, "sequential", n), prof: prof})
	r.Runs = append(r.Runs, run)
	return r, err
}
