package batch

import (
	"context"
	"fmt"
	"time"

	"github.com/devbulk/devbulk"
	"github.com/devbulk/devbulk/devices"
	"github.com/devbulk/devbulk/namespace"
)

// DeleteNetns releases the namespace devbulk made for the run.
const DeleteNetns DeleteStrategy = "netns"

// netns releases the namespace devbulk made for the set: the kernel's
// cleanup_net unregisters every device in it in one batch.
func init() {
	register(DeleteNetns, &strategy{
		order:    5,
		oneBatch: true,
		shared:   "the kernel's one cleanup worker releases namespaces one after another",
		applies: func(_ *devices.Kind, dedicated bool) error {
			if !dedicated {
				return devbulk.Mark(ErrNotApplicable, "delete strategy netns needs a namespace devbulk made for the devices (devbulk bench); it would take everything else in the namespace with it")
			}
			return nil
		},
		// No look and nothing to settle: the release takes the whole
		// namespace, which devbulk made.
		tearDown: func(ctx context.Context, d *job) error {
			err := releaseNetns(ctx, d.t, d.p)
			d.p.Deleted = d.p.Devices
			return err
		},
	})
}

// releaseNetns releases the dedicated namespace and waits until the kernel
// has freed it.
func releaseNetns(ctx context.Context, t Target, p *Phase) error {
	t.Dedicated.Settle()
	m := startMeter()
	t.Dedicated.Release()
	released := time.Since(m.start)
	wctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	done, err := t.Dedicated.WaitFreed(wctx)
	m.stop(p) // user and sys are devbulk's polling; the work is the kernel worker's
	p.ReleaseNS = released.Nanoseconds()
	if err != nil {
		// Released: the kernel will finish, but when is unknown.
		p.WallNS, p.DevicesPerSec, p.MsPerDevice = 0, 0, 0
		p.noteErrors(fmt.Errorf("drain not measured: %w", err))
		return nil
	}
	p.DrainMethod = namespace.FreedMethod
	p.DrainNS = done.Sub(m.start).Nanoseconds()
	p.WallNS = p.DrainNS
	p.FillRates()
	return nil
}
