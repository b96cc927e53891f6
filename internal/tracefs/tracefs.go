// Package tracefs writes and reads the kernel's tracing files
// (/sys/kernel/tracing): what rcutrace's counters and kprofile's graphs
// are made of.
package tracefs

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Dir is where tracefs is mounted (devbulk's VM mounts it there).
const Dir = "/sys/kernel/tracing"

// Path is a file of tracefs.
func Path(elem ...string) string { return filepath.Join(append([]string{Dir}, elem...)...) }

// Append appends s to a tracefs file, as `echo s >> file` does: what
// kprobe_events, triggers and filters take.
func Append(file, s string) error {
	f, err := os.OpenFile(Path(file), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(s)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	return nil
}

// Write replaces a tracefs file's setting, as `echo s > file` does (the
// file is truncated: current_tracer, set_ftrace_filter, options).
func Write(file, s string) error {
	if err := os.WriteFile(Path(file), []byte(s), 0); err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	return nil
}

// Read reads a tracefs file.
func Read(file string) (string, error) {
	b, err := os.ReadFile(Path(file))
	return string(b), err
}

// Lines are the lines of a tracefs file, without blank ones.
func Lines(file string) ([]string, error) {
	s, err := Read(file)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out, nil
}
