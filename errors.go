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
	return Mark(ErrNotSupported, format, args...)
}

// Mark formats an error that matches class with errors.Is (and any error
// wrapped with %w) but says only its own message: the class decides an
// exit code, the message is what the user reads ("netns \"x\" not found",
// not "bad --netns: netns \"x\" not found").
func Mark(class error, format string, args ...any) error {
	return &marked{fmt.Errorf(format, args...), class}
}

type marked struct{ err, class error }

func (e *marked) Error() string { return e.err.Error() }

// Unwrap gives both: errors.Is and errors.As look through the class too
// (a class may be an error that wraps a cause, such as a failed request's).
func (e *marked) Unwrap() []error { return []error{e.err, e.class} }
