package nlbatch

import (
	"errors"
	"fmt"
	"sync"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/devbulk/devbulk/namespace"
)

// Transport is what a Conn talks to: the kernel's NETLINK_ROUTE socket, or
// in tests a fake kernel (package nlbatchtest) that produces the overruns and
// lost ACKs a real kernel produces only under pressure.
type Transport interface {
	// Send writes one datagram. The kernel executes all requests in it
	// before Send returns.
	Send(b []byte) error
	// Recv reads one datagram; block=false returns unix.EAGAIN when empty.
	// An overrun is reported once as unix.ENOBUFS.
	Recv(b []byte, block bool) (int, error)
	Close() error
}

// Options tune a Conn. The zero value is usable.
type Options struct {
	// RcvBuf is the receive buffer to request, in bytes (default 8 MiB).
	// SO_RCVBUFFORCE is tried first, so root is not bound by net.core.rmem_max.
	RcvBuf int
	// SndBuf is the send buffer to request, in bytes (default 4 MiB); one
	// sendmsg must be smaller than it.
	SndBuf int
	// Window overrides the default window (requests per sendmsg), which is
	// otherwise sized from the receive buffer. A window the buffer cannot
	// hold loses ACKs: useful to reproduce overruns, not to go faster.
	Window int
}

// ackTruesize is what one queued ACK costs in the receive buffer: the kernel
// charges skb truesize (~830 bytes measured on 6.18), not the 36-byte message.
// Windows are sized with a margin over it.
const ackTruesize = 1024

// Conn is a NETLINK_ROUTE socket bound to one network namespace.
type Conn struct {
	t      Transport
	seq    uint32
	rcvbuf int // effective receive buffer (the kernel doubles the request)
	sndbuf int
	window int    // current default window, shrunk after overruns
	buf    []byte // from bufs until Close
	fault  *Fault // armed for the next datagram of its type (InjectFault)
}

// CurrentNetns names the process's own network namespace in Dial.
const CurrentNetns = namespace.Current

// Dial opens a socket in network namespace ns (CurrentNetns for the
// process's own). Only a short-lived helper thread enters ns; the socket stays
// bound to ns for its whole life.
func Dial(ns netns.NsHandle, opts Options) (*Conn, error) {
	var c *Conn
	err := namespace.Run(ns, func() error {
		var err error
		c, err = DialHere(opts)
		return err
	})
	return c, err
}

// DialHere opens a socket in the network namespace of the calling OS thread,
// for code that already runs on a locked thread inside a namespace (as in
// namespace.Run): it saves Dial's helper thread.
func DialHere(opts Options) (*Conn, error) {
	if opts.RcvBuf <= 0 {
		opts.RcvBuf = 8 << 20
	}
	if opts.SndBuf <= 0 {
		opts.SndBuf = 4 << 20
	}
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE)
	if err != nil {
		return nil, fmt.Errorf("netlink socket: %w", err)
	}
	s := &sysSocket{fd: fd}
	if err := s.setup(opts); err != nil {
		s.Close()
		return nil, err
	}
	c := NewConn(s, s.rcvbuf, s.sndbuf)
	if opts.Window > 0 {
		c.window = opts.Window
	}
	return c, nil
}

// NewConn returns a Conn over t, as if its receive and send buffers held
// rcvbuf and sndbuf bytes: they size the default window and the datagrams.
// Dial opens the real socket; NewConn is for fakes.
func NewConn(t Transport, rcvbuf, sndbuf int) *Conn {
	return &Conn{
		t:      t,
		rcvbuf: rcvbuf,
		sndbuf: sndbuf,
		window: max(1, rcvbuf/ackTruesize),
		buf:    *bufs.Get().(*[]byte),
	}
}

// bufs recycles the send and receive buffers: programs that open a Conn
// per namespace (netns churn) would otherwise allocate 1 MiB each time, and
// spend more CPU in the garbage collector than the kernel spends on them.
var bufs = sync.Pool{New: func() any { b := make([]byte, 1<<20); return &b }}

// Close closes the socket.
func (c *Conn) Close() error {
	if c.buf != nil {
		b := c.buf
		bufs.Put(&b)
		c.buf = nil
	}
	return c.t.Close()
}

// RcvBuf is the effective receive buffer size in bytes.
func (c *Conn) RcvBuf() int { return c.rcvbuf }

// Window is the number of requests Execute puts in one sendmsg by default:
// what fits in the receive buffer, halved after each overrun.
func (c *Conn) Window() int { return c.window }

func (c *Conn) nextSeq() uint32 {
	c.seq++
	return c.seq
}

type sysSocket struct {
	fd             int
	rcvbuf, sndbuf int
}

func (s *sysSocket) setup(o Options) error {
	if err := unix.Bind(s.fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return fmt.Errorf("netlink bind: %w", err)
	}
	for _, opt := range []int{unix.NETLINK_EXT_ACK, unix.NETLINK_CAP_ACK} {
		if err := unix.SetsockoptInt(s.fd, unix.SOL_NETLINK, opt, 1); err != nil {
			return fmt.Errorf("netlink setsockopt %d: %w", opt, err)
		}
	}
	var err error
	if s.rcvbuf, err = setBuf(s.fd, unix.SO_RCVBUFFORCE, unix.SO_RCVBUF, o.RcvBuf); err != nil {
		return err
	}
	if s.sndbuf, err = setBuf(s.fd, unix.SO_SNDBUFFORCE, unix.SO_SNDBUF, o.SndBuf); err != nil {
		return err
	}
	return nil
}

// setBuf asks for size bytes, falling back from the FORCE option (needs
// CAP_NET_ADMIN) to the plain one (capped by net.core.[rw]mem_max), and
// returns what the kernel granted.
func setBuf(fd, force, plain, size int) (int, error) {
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, force, size); err != nil {
		if !errors.Is(err, unix.EPERM) {
			return 0, fmt.Errorf("setsockopt buffer: %w", err)
		}
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, plain, size); err != nil {
			return 0, fmt.Errorf("setsockopt buffer: %w", err)
		}
	}
	got, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, plain)
	if err != nil {
		return 0, fmt.Errorf("getsockopt buffer: %w", err)
	}
	return got, nil
}

func (s *sysSocket) Send(b []byte) error {
	return unix.Sendto(s.fd, b, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK})
}

func (s *sysSocket) Recv(b []byte, block bool) (int, error) {
	flags := 0
	if !block {
		flags = unix.MSG_DONTWAIT
	}
	for {
		n, _, err := unix.Recvfrom(s.fd, b, flags)
		if err == unix.EINTR {
			continue
		}
		return n, err
	}
}

func (s *sysSocket) Close() error { return unix.Close(s.fd) }
