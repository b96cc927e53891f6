package bisect

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/devbulk/devbulk/internal/safefs"
	"golang.org/x/sys/unix"
)

// Boot is one boot's measurement, as the log keeps it.
type Boot struct {
	Phase   string               `json:"phase"` // ends, step, confirm
	Spec    string               `json:"spec"`
	Samples map[string][]float64 `json:"samples,omitempty"`
	Err     string               `json:"error,omitempty"` // did not boot, or hung
	WallNS  int64                `json:"wall_ns"`
}

// Log is every boot of a bisection, in order, kept in a file after each
// one: run again with the same options, a bisection takes its boots from
// the log instead of booting (the search decides the same way on the same
// samples) and goes on from where it was stopped, losing at most the boot
// in flight.
type Log struct {
	// Key names the bisection: the hash of what decides its boots.
	Key   string `json:"key"`
	Boots []Boot `json:"boots"`
	path  string
	used  int // boots given back so far
}

// Key is the hash of a bisection's options that decide its boots: the
// kernels, the scenario as measured, and the rules.
func Key(parts ...any) string {
	b, _ := json.Marshal(parts)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// OpenLog reads the log at path when it exists and has key, or starts a
// new one there; the directory is made (0700) if missing.
func OpenLog(path, key string) (*Log, error) {
	l := &Log{Key: key, path: path}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if errors.Is(err, os.ErrNotExist) {
		return l, nil
	}
	if err != nil {
		return nil, fmt.Errorf("the bisection's log %s: %w", path, err)
	}
	defer f.Close()
	var saved Log
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("the bisection's log %s is not a regular file", path)
	}
	if err := json.NewDecoder(io.LimitReader(f, 64<<20)).Decode(&saved); err != nil {
		return nil, fmt.Errorf("the bisection's log %s: %w (remove it to start again)", path, err)
	}
	if saved.Key == key {
		l.Boots = saved.Boots
	}
	return l, nil
}

// Resumed is how many boots the log held when it was opened.
func (l *Log) Resumed() int { return len(l.Boots) - l.used }

// next gives back the next logged boot when it is the one asked for.
func (l *Log) next(phase, spec string) (Boot, bool) {
	if l.used >= len(l.Boots) || l.Boots[l.used].Phase != phase || l.Boots[l.used].Spec != spec {
		l.Boots = l.Boots[:l.used] // options changed the course: the rest is not this bisection's
		return Boot{}, false
	}
	l.used++
	return l.Boots[l.used-1], true
}

// add appends a boot and writes the log (when it has a file), whole or
// not at all (safefs.Replace).
func (l *Log) add(b Boot) error {
	l.Boots = append(l.Boots, b)
	l.used = len(l.Boots)
	if l.path == "" {
		return nil
	}
	data, err := json.Marshal(l)
	if err != nil {
		return err
	}
	return safefs.Replace(l.path, data, 0o600)
}
