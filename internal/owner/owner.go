// Package owner identifies a process across pid reuse and reboots, so that
// state a devbulk process left behind is cleaned up only once that very
// process is gone.
//
// A pid alone is not an identity: pids are reused, and a renamed binary or a
// recycled pid fools any test of /proc/PID/comm. An Owner is the pid, the
// process's start time (field 22 of /proc/PID/stat, in clock ticks since
// boot) and the boot id; a process is alive when all three match.
package owner

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Owner identifies one process.
type Owner struct {
	PID    int    `json:"pid"`
	Start  uint64 `json:"start_ticks"` // /proc/PID/stat field 22
	BootID string `json:"boot_id"`     // /proc/sys/kernel/random/boot_id
}

// Self is the calling process.
func Self() Owner {
	o := Owner{PID: os.Getpid(), BootID: bootID()}
	o.Start, _ = startTime(o.PID)
	return o
}

func (o Owner) String() string { return fmt.Sprintf("pid %d", o.PID) }

// Alive reports whether the process o names still runs: same boot, and a
// process with o's pid that started when o did.
func (o Owner) Alive() bool {
	if o.PID <= 0 || o.BootID == "" || o.BootID != bootID() {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", o.PID))
	if err != nil {
		return false
	}
	start, err := parseStart(b)
	return err == nil && start == o.Start && !exited(b)
}

// Dying reports whether the process o names is alive but killed: its main
// thread has exited (a zombie, state Z) while another thread still
// finishes a system call (a netlink request the kernel is carrying out).
// It sends nothing more once that returns; Wait waits for it.
func (o Owner) Dying() bool {
	if !o.Alive() {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", o.PID))
	return err == nil && zombie(b)
}

// zombie reports whether a /proc/PID/stat's main thread has exited.
func zombie(stat []byte) bool {
	i := bytes.LastIndexByte(stat, ')')
	f := strings.Fields(string(stat[i+1:]))
	return len(f) > 0 && (f[0] == "Z" || f[0] == "X")
}

// exited reports whether a /proc/PID/stat is that of a process whose every
// thread has exited: a zombie (state Z or X, field 3) waiting to be reaped,
// with one thread (field 20) left. A killed process's main thread shows Z
// while another of its threads still finishes a netlink batch: alive.
func exited(stat []byte) bool {
	i := bytes.LastIndexByte(stat, ')')
	f := strings.Fields(string(stat[i+1:]))
	return len(f) > 17 && (f[0] == "Z" || f[0] == "X") && f[17] == "1"
}

func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// startTime reads field 22 of /proc/PID/stat. The command name (field 2)
// may hold spaces and parentheses: fields are counted after its last ')'.
func startTime(pid int) (uint64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return parseStart(b)
}

func parseStart(stat []byte) (uint64, error) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, errors.New("/proc/PID/stat: no command name")
	}
	f := strings.Fields(string(stat[i+1:]))
	// f[0] is field 3 (state): field 22 is f[19].
	if len(f) < 20 {
		return 0, errors.New("/proc/PID/stat: too few fields")
	}
	return strconv.ParseUint(f[19], 10, 64)
}

// Write creates the file path holding the calling process's identity. It
// refuses to follow a symlink or to reuse an existing file.
func Write(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	err = json.NewEncoder(f).Encode(Self())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Read reads an owner file that Write made, without following a symlink.
func Read(path string) (Owner, error) {
	var o Owner
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return o, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 4096))
	if err != nil {
		return o, err
	}
	if err := json.Unmarshal(b, &o); err != nil {
		return o, fmt.Errorf("%s: %w", path, err)
	}
	if o.PID <= 0 || o.BootID == "" {
		return o, fmt.Errorf("%s: no pid or boot id", path)
	}
	return o, nil
}

// Stop kills the process o names (SIGKILL) and waits until it is gone. The
// process is pinned by a pidfd before its start time is checked, so a pid
// reused meanwhile is never signalled. A process that is no longer o is not
// an error: there is nothing to stop.
func (o Owner) Stop(timeout time.Duration) error {
	return o.pinned(func(fd int) error {
		if err := unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0); err != nil && !errors.Is(err, unix.ESRCH) {
			return fmt.Errorf("killing %s: %w", o, err)
		}
		return o.waitExit(fd, timeout)
	})
}

// Wait waits, at most timeout, until the process o names is gone, every
// thread of it; a process that is no longer o is gone.
func (o Owner) Wait(timeout time.Duration) error {
	return o.pinned(func(fd int) error { return o.waitExit(fd, timeout) })
}

// pinned calls fn with a pidfd of the process o names, pinned before its
// start time is checked; nothing when that process is gone, or the pid is
// another process's now.
func (o Owner) pinned(fn func(fd int) error) error {
	if o.BootID != bootID() {
		return nil
	}
	fd, err := unix.PidfdOpen(o.PID, 0)
	if errors.Is(err, unix.ESRCH) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("pidfd_open %d: %w", o.PID, err)
	}
	defer unix.Close(fd)
	if start, err := startTime(o.PID); err != nil || start != o.Start {
		return nil
	}
	return fn(fd)
}

// waitExit waits until pidfd fd's process has exited: the pidfd becomes
// readable then.
func (o Owner) waitExit(fd int, timeout time.Duration) error {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for deadline := time.Now().Add(timeout); ; {
		n, err := unix.Poll(fds, int(max(0, time.Until(deadline).Milliseconds())))
		switch {
		case n > 0:
			return nil
		case errors.Is(err, unix.EINTR) && time.Now().Before(deadline):
			continue
		case err != nil:
			return fmt.Errorf("waiting for %s to exit: %w", o, err)
		}
		return fmt.Errorf("%s did not exit within %v", o, timeout)
	}
}
