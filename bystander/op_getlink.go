package bystander

import (
	"context"
)

// getlink: one RTM_GETLINK of the namespace's lo. It still waits for a
// batch: on the development machine's 6.18 (2026-12-07) its p99 went from
// 1.6 ms idle to 280 ms during `delete --bystander getlink@100` of 5 000 ifb.
func init() {
	register("getlink", &spec{help: "one RTM_GETLINK", rate: 100, make: func(e *env) (op, error) {
		return func(context.Context) (int, error) {
			_, err := e.conn.LinkByIndex(1)
			return 0, err
		}, nil
	}})
}
