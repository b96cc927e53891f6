package namespace

// The locked thread.
//
// setns(2) and unshare(2) change the namespace of one OS thread. As in
// containernetworking's pkg/ns, every closure here runs on a fresh goroutine
// locked to its own OS thread that is never unlocked, so the Go runtime never
// schedules other code on a thread that was elsewhere. One more step: the
// thread is switched back to its original namespace before the goroutine
// returns. A locked thread normally dies with its goroutine, but the process's
// main thread cannot exit: the runtime parks it forever instead, and a
// namespace it sat in would stay alive — with every device in it — until the
// process ends.

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// Current names the calling process's own network namespace in Run. It is
// not -1, the value of a closed handle: a handle closed by mistake must fail,
// not quietly mean devbulk's own namespace.
const Current = netns.NsHandle(-2)

// ErrClosed reports a namespace handle that was closed.
var ErrClosed = errors.New("network namespace handle is closed")

// Run calls fn on a dedicated OS thread whose network namespace is ns
// (Current: the namespace of the process's threads), waits, and returns fn's error.
// Processes that fn starts with os/exec inherit ns.
func Run(ns netns.NsHandle, fn func() error) error {
	if !ns.IsOpen() {
		return ErrClosed
	}
	return onThread(func() error {
		if ns != Current {
			if err := netns.Set(ns); err != nil {
				return fmt.Errorf("setns: %w", err)
			}
		}
		return fn()
	})
}

// Unshare creates a network namespace held only by the returned handle (and by
// whatever is later created inside it). Closing the handle releases it: the
// kernel then dismantles it, with every device inside, asynchronously.
func Unshare() (netns.NsHandle, error) {
	h := netns.None()
	err := onThread(func() error {
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			return fmt.Errorf("unshare(CLONE_NEWNET): %w", err)
		}
		fd, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("open new netns: %w", err)
		}
		h = netns.NsHandle(fd)
		return nil
	})
	return h, err
}

// onThread runs fn on a fresh locked thread and puts the thread back in its
// original network namespace afterwards (see the package documentation).
func onThread(fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		// Never unlocked on purpose: the thread dies with this goroutine.
		runtime.LockOSThread()
		orig, err := netns.Get()
		if err != nil {
			errc <- fmt.Errorf("open this thread's netns: %w", err)
			return
		}
		defer orig.Close()
		err = fn()
		if rerr := netns.Set(orig); rerr != nil {
			err = errors.Join(err, fmt.Errorf("setns back: %w", rerr))
		}
		errc <- err
	}()
	return <-errc
}
