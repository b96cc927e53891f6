// Package result holds what every devbulk result document shares: its
// header (tool, version, kernel, CPUs, date), the process's CPU time and
// peak memory, and the compact duration format of the tables.
package result

import (
	"fmt"
	"runtime"
	"time"

	"github.com/devbulk/devbulk"
	"golang.org/x/sys/unix"
)

// Header is what every devbulk result document starts with: which tool,
// which kernel, how many CPUs, when.
type Header struct {
	Tool    string `json:"tool"`
	Version string `json:"version"`
	Kernel  string `json:"kernel"`
	CPUs    int    `json:"cpus"`
	Date    string `json:"date"`
}

// NewHeader describes this machine and run now.
func NewHeader() Header {
	var u unix.Utsname
	_ = unix.Uname(&u)
	return Header{Tool: "devbulk", Version: devbulk.Version(), Kernel: unix.ByteSliceToString(u.Release[:]),
		CPUs: runtime.NumCPU(), Date: time.Now().UTC().Format(time.RFC3339)}
}

// CPU is the user and system time this process has used, in nanoseconds,
// with that of its waited-for children when children is set.
func CPU(children bool) (user, sys int64) {
	var ru unix.Rusage
	_ = unix.Getrusage(unix.RUSAGE_SELF, &ru)
	user, sys = ns(ru.Utime), ns(ru.Stime)
	if children {
		_ = unix.Getrusage(unix.RUSAGE_CHILDREN, &ru)
		user, sys = user+ns(ru.Utime), sys+ns(ru.Stime)
	}
	return user, sys
}

func ns(t unix.Timeval) int64 { return t.Sec*1e9 + int64(t.Usec)*1e3 }

// MaxRSSKiB is the process's peak resident set, in KiB.
func MaxRSSKiB() int64 {
	var ru unix.Rusage
	if unix.Getrusage(unix.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Maxrss
}

// FormatNS prints nanoseconds compactly, with 3 significant digits.
func FormatNS(ns int64) string {
	d := time.Duration(ns)
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.3gs", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.3gms", float64(d)/1e6)
	default:
		return fmt.Sprintf("%.3gµs", float64(d)/1e3)
	}
}
