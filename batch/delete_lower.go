package batch

import (
	"context"

	"github.com/devbulk/devbulk"
	"github.com/devbulk/devbulk/devices"
)

// DeleteLower deletes the lower devices devbulk made; the uppers go along.
const DeleteLower DeleteStrategy = "lower"

// lower deletes the lower devices devbulk created; the kernel unregisters
// their upper links in the same batch.
func init() {
	register(DeleteLower, &strategy{
		order:    6,
		oneBatch: true,
		applies: func(k *devices.Kind, _ bool) error {
			if k != nil && !k.NeedsLower {
				return devbulk.Mark(ErrNotApplicable, "delete strategy lower applies to kinds with a lower device (%s), not %s", devices.NamesOf(devices.Where(func(k *devices.Kind) bool { return k.NeedsLower })), k.Name)
			}
			return nil
		},
		ready: func(_ Target, s *Set, _ DeleteOptions) error {
			if len(s.Lowers) == 0 {
				return devbulk.Mark(ErrNotApplicable, "delete strategy lower: the %s links sit on lower devices devbulk did not create; deleting those is not devbulk's call", s.Kind.Name)
			}
			return nil
		},
		tearDown: afterLook(func(ctx context.Context, d *job) (map[int32]bool, error) {
			uppers, lowers := d.s.split(d.mine)
			confirmed, err := d.each(ctx, oneByOne{c: d.t.Conn, devs: lowers, p: d.p})
			for _, u := range uppers {
				if confirmed[u.Parent] {
					confirmed[u.Index] = true // went with its lower device
				}
			}
			return confirmed, err
		}),
		ip: func(s *Set) IPCommand { return ipDelEach(s.Lowers) },
	})
}
