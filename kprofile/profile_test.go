package kprofile

import (
	"errors"
	"testing"

	"github.com/devbulk/devbulk"
)

// A tracer someone else holds is a profile that cannot be had here now:
// the command exits 4 for it, as for a kernel that cannot trace.
func TestTracerBusyIsNotSupported(t *testing.T) {
	for _, err := range []error{ErrTracerBusy, ErrUnavailable} {
		if !errors.Is(err, devbulk.ErrNotSupported) {
			t.Errorf("%q does not match devbulk.ErrNotSupported", err)
		}
	}
}
