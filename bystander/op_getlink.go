package bystander

import (
	"context"
)

// getlink: one RTM_GETLINK of the namespace's lo (the kernel answers it
// without RTNL since 6.9; earlier kernels take the lock).
func init() {
	register("getlink", &spec{help: "one RTM_GETLINK", rate: 100, make: func(e *env) (op, error) {
		return func(context.Context) (int, error) {
			_, err := e.conn.LinkByIndex(1)
			return 0, err
		}, nil
	}})
}
