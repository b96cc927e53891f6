package devbulk_test

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/devbulk/devbulk"
)

// A "not here" error keeps its message and its cause, and matches
// ErrNotSupported however deeply it is wrapped.
func ExampleNotSupported() {
	err := devbulk.NotSupported("no %s/kprobe_events: %w", "/sys/kernel/tracing", fs.ErrNotExist)
	err = fmt.Errorf("--trace-rcu: %w", err)
	fmt.Println(err)
	fmt.Println(errors.Is(err, devbulk.ErrNotSupported), errors.Is(err, fs.ErrNotExist))
	// Output:
	// --trace-rcu: no /sys/kernel/tracing/kprobe_events: file does not exist
	// true true
}
