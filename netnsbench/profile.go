package netnsbench

import (
	"fmt"

	"github.com/devbulk/devbulk/kprofile"
)

// newProfiler finds this kernel's pernet exit handlers and prepares the
// cleanup worker's profile for runs of up to n namespaces; nil when not
// asked for.
func newProfiler(enabled bool, n int) (*kprofile.Profiler, error) {
	if !enabled {
		return nil, nil
	}
	handlers, err := kprofile.PernetHandlers()
	if err != nil {
		return nil, fmt.Errorf("--profile: %w", err)
	}
	// About a hundred handler calls a namespace, two events each.
	p, err := kprofile.New(kprofile.Netns(handlers), min(96<<10, max(8<<10, 12*n)))
	if err != nil {
		return nil, fmt.Errorf("--profile: %w", err)
	}
	return p, nil
}
