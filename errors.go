package devbulk

import (
	"errors"
	"fmt"
)

// ErrNotSupported is what every "not here" error of devbulk's packages
// matches with errors.Is: a kind this kernel cannot create, a module that
// cannot be unloaded, tracing the kernel refuses, no qemu. The command line
// exits 4 (kselftest's "skip") on it.
var ErrNotSupported = errors.New("not supported here")

// NotSupported formats an error that matches ErrNotSupported, keeping the
// message as given and any error wrapped with %w.
func NotSupported(format string, args ...any) error {
	return &notSupported{fmt.Errorf(format, args...)}
}

type notSupported struct{ err error }

func (e *notSupported) Error() string        { return e.err.Error() }
func (e *notSupported) Unwrap() error        { return e.err }
func (e *notSupported) Is(target error) bool { return target == ErrNotSupported }
