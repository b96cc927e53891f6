package batch

import (
	"errors"
	"fmt"
	"slices"

	"golang.org/x/sys/unix"

	"github.com/devbulk/devbulk"

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
	// Everywhere lists every other namespace of the machine, named or
	// not (a module unload reaches them all), as paths for Dial.
	Everywhere() ([]string, error)
	// Self is the set's namespace as a file descriptor, as RTM_GETNSID
	// names it.
	Self() int
}

// errNoDialer says that what needs sockets beyond Target.Conn has no way
// to open them.
func errNoDialer(who string) error {
	return devbulk.Mark(ErrNotApplicable, "%s needs the namespace (Target.NS or Target.Dialer) to open its sockets in", who)
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

func (n nsDialer) Everywhere() ([]string, error) {
	self := "/proc/thread-self/ns/net"
	if n > 0 {
		self = fmt.Sprintf("/proc/self/fd/%d", n)
	}
	var st unix.Stat_t
	if err := unix.Stat(self, &st); err != nil {
		return nil, err
	}
	var out []string
	for ino, path := range namespace.Discover() {
		if ino != st.Ino {
			out = append(out, path)
		}
	}
	slices.Sort(out)
	return out, nil
}

func (n nsDialer) Self() int { return int(n) }
