package batch

import (
	"errors"
	"fmt"

	"github.com/vishvananda/netns"

	"github.com/devbulk/devbulk/namespace"
	"github.com/devbulk/devbulk/nlbatch"
)

// Dialer opens the sockets a delete needs beyond Target.Conn: more in the
// set's namespace (the parallel strategy's workers), and one in each other
// named namespace (the scan for devices there that sit on the set's).
type Dialer interface {
	// Dial opens a socket in the named namespace at path; "" is the
	// set's. A namespace gone meanwhile is an error that matches
	// ErrNamespaceGone.
	Dial(path string, o nlbatch.Options) (*nlbatch.Conn, error)
	// Elsewhere lists the other named namespaces, as paths for Dial.
	Elsewhere() ([]string, error)
	// Self is the set's namespace as a file descriptor, as RTM_GETNSID
	// names it.
	Self() int
}

// ErrNamespaceGone reports a namespace that was removed before devbulk
// could open it.
var ErrNamespaceGone = errors.New("network namespace gone")

// dialer is t.Dialer, or one for t.NS, or nil when there is neither.
func (t Target) dialer() Dialer {
	switch {
	case t.Dialer != nil:
		return t.Dialer
	case t.NS > 0 || t.NS == nlbatch.CurrentNetns:
		return nsDialer(t.NS)
	}
	return nil
}

// nsDialer dials through a namespace handle and finds the other named
// namespaces (namespace.Named).
type nsDialer netns.NsHandle

func (n nsDialer) Dial(path string, o nlbatch.Options) (*nlbatch.Conn, error) {
	if path == "" {
		return nlbatch.Dial(netns.NsHandle(n), o)
	}
	ns, err := namespace.OpenForSocket(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrNamespaceGone, path, err)
	}
	defer ns.Close()
	return nlbatch.Dial(ns.Handle, o)
}

func (n nsDialer) Elsewhere() ([]string, error) {
	if n <= 0 {
		return nil, nil // the process's own: not compared, not scanned
	}
	return namespace.Named(netns.NsHandle(n))
}

func (n nsDialer) Self() int { return int(n) }
