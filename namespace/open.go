package namespace

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/devbulk/devbulk"
)

// ErrBad reports a --netns (or move's --to) that names no network
// namespace devbulk may work in (a usage error). Its errors say what is
// wrong with the argument; the caller names the flag.
var ErrBad = errors.New("bad namespace")

func bad(format string, args ...any) error { return devbulk.Mark(ErrBad, format, args...) }

// Dir is where `ip netns add` keeps named namespaces.
const Dir = "/run/netns"

// CurrentName names devbulk's own namespace in a --netns.
const CurrentName = "current"

// Resolve resolves a --netns argument to the file to open: "current"
// (devbulk's own namespace, which must be said explicitly), a plain name
// from /run/netns (no slash, not . or ..), or a path, which must hold a slash.
func Resolve(arg string) (path string, current bool, err error) {
	switch {
	case arg == "":
		return "", false, bad("required: a name from `ip netns list`, a path to a namespace file, or %q to work in devbulk's own namespace", CurrentName)
	case arg == CurrentName:
		return "/proc/self/ns/net", true, nil
	case strings.ContainsRune(arg, 0):
		return "", false, bad("%q holds a NUL byte", arg)
	case strings.Contains(arg, "/"):
		return filepath.Clean(arg), false, nil
	case arg == "." || arg == ".." || len(arg) > 255:
		return "", false, bad("%q is not a namespace name (names from `ip netns list` hold no slash and are not . or ..)", arg)
	}
	return filepath.Join(Dir, arg), false, nil
}

// ID is what a network namespace is, however it is named: its nsfs inode
// and its cookie (see cookie; 0 where unknown, as in records of older
// devbulks or kernels). The inode alone can be reused by a namespace made
// after this one is freed; the cookie tells them apart.
type ID struct {
	Inode  uint64
	Cookie uint64
}

// Is reports whether id and o are the same namespace: the same inode, and
// the same cookie where both are known. It is devbulk's one rule for it.
func (id ID) Is(o ID) bool {
	return id.Inode == o.Inode && (id.Cookie == 0 || o.Cookie == 0 || id.Cookie == o.Cookie)
}

// NS is a network namespace as devbulk works with it, one value from where
// it is opened on: its handle, the name it was given (a name from
// /run/netns, a path, or "current"), and its ID, read once when it is
// opened (the cookie takes a hop onto a thread of its own).
type NS struct {
	Handle netns.NsHandle
	Name   string
	ID
}

// Close closes the namespace's handle.
func (n NS) Close() error { return n.Handle.Close() }

// Open opens the network namespace a --netns names. The file must be a
// network namespace (nsfs, NS_GET_NSTYPE CLONE_NEWNET); devbulk's own
// namespace is refused unless the argument is "current".
func Open(arg string) (NS, error) {
	path, current, err := Resolve(arg)
	if err != nil {
		return NS{Handle: netns.None()}, err
	}
	n, err := OpenFile(path)
	if err != nil {
		if !strings.Contains(arg, "/") && errors.Is(err, unix.ENOENT) {
			return n, bad("netns %q not found under %s (create it with `ip netns add %s`)", arg, Dir, arg)
		}
		return n, bad("%s: %w", arg, err)
	}
	n.Name = arg
	if !current {
		var self unix.Stat_t
		if err := unix.Stat("/proc/self/ns/net", &self); err == nil && self.Ino == n.Inode {
			n.Close()
			return NS{Handle: netns.None()}, bad("%s is devbulk's own network namespace: say %s to work there", arg, CurrentName)
		}
	}
	return n, nil
}

// OpenFile opens path and checks that it is a network namespace, named
// by its path.
func OpenFile(path string) (NS, error) {
	n, err := OpenForSocket(path)
	if err == nil {
		n.Cookie = cookie(n.Handle)
	}
	return n, err
}

// OpenForSocket is OpenFile for a caller that only opens sockets there
// (a scan of every namespace for devices of others): without the cookie,
// whose hop onto a thread of its own each of hundreds of namespaces would
// pay for nothing.
func OpenForSocket(path string) (NS, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return NS{Handle: netns.None()}, err
	}
	ino, err := inode(fd)
	if err != nil {
		unix.Close(fd)
		return NS{Handle: netns.None()}, err
	}
	return NS{Handle: netns.NsHandle(fd), Name: path, ID: ID{Inode: ino}}, nil
}

// inode checks that fd is a network namespace and returns its inode.
func inode(fd int) (uint64, error) {
	var fs unix.Statfs_t
	if err := unix.Fstatfs(fd, &fs); err != nil {
		return 0, err
	}
	if fs.Type != unix.NSFS_MAGIC {
		return 0, errors.New("not a namespace file (nsfs): a name from `ip netns list`, or a path like /proc/PID/ns/net or /run/netns/NAME")
	}
	typ, err := unix.IoctlRetInt(fd, unix.NS_GET_NSTYPE)
	if err != nil {
		return 0, fmt.Errorf("NS_GET_NSTYPE: %w", err)
	}
	if typ != unix.CLONE_NEWNET {
		return 0, errors.New("a namespace, but not a network namespace")
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return 0, err
	}
	return st.Ino, nil
}

// cookie returns the cookie of namespace ns (SO_NETNS_COOKIE, Linux
// 5.14 and later), or 0 where the kernel has none. Unlike the nsfs inode,
// which a namespace made soon after this one is freed can reuse, a cookie is
// never given to another namespace during a boot: inode and cookie together
// are the namespace, however it is named.
func cookie(ns netns.NsHandle) uint64 {
	var cookie uint64
	Run(ns, func() error {
		fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		cookie, err = unix.GetsockoptUint64(fd, unix.SOL_SOCKET, unix.SO_NETNS_COOKIE)
		return err
	})
	return cookie
}
