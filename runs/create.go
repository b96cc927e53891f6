package runs

import (
	"context"
	"errors"
	"time"

	"golang.org/x/sys/unix"

	"github.com/devbulk/devbulk/batch"
	"github.com/devbulk/devbulk/devices"
	"github.com/devbulk/devbulk/internal/owner"
	"github.com/devbulk/devbulk/nlbatch"
)

// Create creates a run's devices in the namespace conn is bound to (o.NS,
// as the user named it) and records them in
// the store: the record is saved before the first device is created, so a
// killed devbulk leaves what `devbulk cleanup` needs, and again once every
// device is created and looked up. On failure or Ctrl-C what was created is
// deleted and the record removed. A kind the kernel does not know
// ("Unknown device type": not built in, no module loaded) is probed once
// (devices.Ready says why, or loads its module as the kernel's own
// request_module would where there is no modprobe), then created again.
func (s *Store) Create(ctx context.Context, conn *nlbatch.Conn, o batch.CreateOptions) (batch.Phase, *Record, error) {
	p, rec, err := s.create(ctx, conn, o)
	if errors.Is(err, unix.EOPNOTSUPP) && ctx.Err() == nil {
		if o.Lower, err = devices.Ready(o.Kind); err != nil {
			return p, nil, err
		}
		p, rec, err = s.create(ctx, conn, o)
	}
	return p, rec, err
}

func (s *Store) create(ctx context.Context, conn *nlbatch.Conn, o batch.CreateOptions) (batch.Phase, *Record, error) {
	recs, _, err := s.Load()
	if err != nil {
		return batch.Phase{}, nil, err
	}
	rec := &Record{Prefix: o.Devices.Prefix, Kind: o.Kind.Name, Place: placeOf(o.NS), Owner: owner.Self(), State: Creating, Created: time.Now().UTC().Truncate(time.Second)}
	o.Ledger = &ledger{s: s, r: rec, recs: recs}
	p, set, err := batch.CreateIn(ctx, conn, o)
	if err != nil {
		if set == nil {
			return p, nil, err
		}
		return p, rec, err
	}
	return p, rec, nil
}
