package batch

import (
	"errors"
	"fmt"
	"slices"

	"golang.org/x/sys/unix"

	"github.com/devbulk/devbulk"

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
	case t.NS.Handle > 0 || t.NS.Handle == nlbatch.CurrentNetns:
		return nsDialer(t.NS)
	}
	return nil
}

// nsDialer dials through a namespace's handle and finds the other named
// namespaces (namespace.Named).
type nsDialer namespace.NS

func (n nsDialer) Dial(path string, o nlbatch.Options) (*nlbatch.Conn, error) {
	if path == "" {
		return nlbatch.Dial(n.Handle, o)
	}
	ns, err := namespace.OpenForSocket(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrNamespaceGone, path, err)
	}
	defer ns.Close()
	return nlbatch.Dial(ns.Handle, o)
}

func (n nsDialer) Elsewhere() ([]string, error) {
	if n.Handle <= 0 {
		return nil, nil // the process's own: not compared, not scanned
	}
	return namespace.Named(n.Handle)
}

func (n nsDialer) Everywhere() ([]string, error) {
	self := n.Inode
	if self == 0 { // not read when it was opened, or the process's own
		var st unix.Stat_t
		err := unix.Stat("/proc/thread-self/ns/net", &st)
		if n.Handle > 0 {
			err = unix.Fstat(int(n.Handle), &st)
		}
		if err != nil {
			return nil, err
		}
		self = st.Ino
	}
	var out []string
	for ino, path := range namespace.Discover() {
		if ino != self {
			out = append(out, path)
		}
	}
	slices.Sort(out)
	return out, nil
}

func (n nsDialer) Self() int { return int(n.Handle) }
