package bystander

import (
	"context"
	"errors"

	"github.com/devbulk/devbulk/nlbatch"
)

// dump: a dump of every link of the prober's namespace, as a monitoring
// agent takes one; a dump the kernel flags interrupted is counted and
// retried. One flagged on every attempt (nlbatch.MaxDumpAttempts) counts
// them all and is reported with nlbatch.ErrDumpInconsistent.
func init() {
	register("dump", &spec{help: "a full link dump, interrupted dumps counted", rate: 20, make: func(e *env) (op, error) {
		req := nlbatch.GetLinkRequest(0, "")
		return func(context.Context) (int, error) {
			attempts := 0
			err := e.conn.Dump(req, func() { attempts++ }, func([]byte) error { return nil })
			if errors.Is(err, nlbatch.ErrDumpInconsistent) {
				return attempts, err // the last attempt was flagged too
			}
			return max(0, attempts-1), err
		}, nil
	}})
}
