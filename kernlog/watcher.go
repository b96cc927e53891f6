package kernlog

import (
	"encoding/binary"
	"errors"
	"sync"

	"golang.org/x/sys/unix"
)

// Watcher reads the kernel's log from the moment it starts until Stop.
type Watcher struct {
	noise  Noise
	fd     int
	unread string // why the log could not be read
	// wake is an eventfd beside the log in the reader's poll: Stop writes
	// it to end the watch at once (a poll timeout made every command wait
	// up to its length at the end).
	wake int
	done chan struct{}

	mu    sync.Mutex // the log is read under it, so that a phase's records are its own
	phase string
	g     grouper
	lost  int
}

// kmsg is the kernel's log, every record of every level.
const kmsg = "/dev/kmsg"

// Watch starts reading the kernel's log at its end. Where the log cannot
// be read (no /dev/kmsg, not allowed), the Watcher's summary says why.
func Watch(noise Noise) *Watcher {
	w := &Watcher{noise: noise, fd: -1, wake: -1, done: make(chan struct{})}
	fd, err := unix.Open(kmsg, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err == nil {
		if _, err = unix.Seek(fd, 0, unix.SEEK_END); err != nil {
			unix.Close(fd)
		}
	}
	if err != nil {
		close(w.done)
		w.unread = kmsg + ": " + err.Error()
		return w
	}
	wake, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		unix.Close(fd)
		close(w.done)
		w.unread = "eventfd: " + err.Error()
		return w
	}
	w.fd, w.wake = fd, wake
	go w.follow()
	return w
}

// Phase says what devbulk does from now on: records read so far belong to
// the phase before.
func (w *Watcher) Phase(name string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.fd < 0 {
		return
	}
	w.drain()
	w.phase = name
}

// Stop reads what is left in the log and ends the watch.
func (w *Watcher) Stop() Summary {
	if w.fd < 0 {
		return Summary{Unread: w.unread}
	}
	unix.Write(w.wake, binary.NativeEndian.AppendUint64(nil, 1)) // cannot fail: the counter is far from its limit
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	w.drain()
	unix.Close(w.fd)
	unix.Close(w.wake)
	return w.summary()
}

// summary ends the report under way and leaves out the noise (w.mu held).
func (w *Watcher) summary() Summary {
	w.g.close()
	s := Summary{Records: w.g.records, Lost: w.lost, Findings: []Finding{}}
	for _, f := range w.g.done {
		if w.noise.filters(f) {
			s.Filtered++
			continue
		}
		s.Findings = append(s.Findings, f)
	}
	return s
}

// follow reads records as the kernel writes them, until Stop wakes it.
func (w *Watcher) follow() {
	defer close(w.done)
	fds := []unix.PollFd{{Fd: int32(w.fd), Events: unix.POLLIN}, {Fd: int32(w.wake), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, -1)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil || fds[1].Revents != 0:
			return // Stop reads what is left
		case n > 0:
			w.mu.Lock()
			w.drain()
			w.mu.Unlock()
		}
	}
}

// drain reads every record there is now (w.mu held).
func (w *Watcher) drain() {
	buf := make([]byte, 8192) // a record is at most ~1 KiB of text and its dictionary
	for {
		n, err := unix.Read(w.fd, buf)
		switch {
		case errors.Is(err, unix.EPIPE): // overwritten before it was read
			w.lost++
			continue
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil || n <= 0:
			return
		}
		if r, ok := parseRecord(buf[:n]); ok {
			w.g.add(r, w.phase)
		}
	}
}
