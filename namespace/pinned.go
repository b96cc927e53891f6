package namespace

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/devbulk/devbulk/internal/owner"
	"github.com/devbulk/devbulk/internal/safefs"
)

// DefaultPinDir holds the namespaces that devbulk keeps alive by bind
// mounts (netns create), as `ip netns add` does under /run/netns: one
// directory per run, named after the devbulk process that made it, so that
// CleanupPinned can tell a crashed run from a running one.
const DefaultPinDir = "/run/devbulk/netns"

func pinDir(dir string) string {
	if dir == "" {
		return DefaultPinDir
	}
	return dir
}

// Pinned is one run's directory of bind-mounted namespaces. Beside the
// mounts it holds two files that let CleanupPinned prove a mount is
// devbulk's before it unmounts it: "owner" (the process, see
// internal/owner) and "mounts" (each entry's name and the nsfs inode it was
// given).
type Pinned struct {
	dir    string
	mounts *os.File // "mounts", appended to by Pin
}

const (
	ownerFile  = "owner"
	mountsFile = "mounts"
)

// NewPinned makes a run's directory under top ("": DefaultPinDir), a
// shared mount point of its own, as
// iproute2 does for /run/netns: an unmount here then propagates to the
// copies that later mount namespaces (`ip netns exec`, systemd units) took,
// which would otherwise keep a namespace alive after devbulk released it.
func NewPinned(top string) (*Pinned, error) {
	top = pinDir(top)
	if err := os.MkdirAll(top, 0o700); err != nil {
		return nil, err
	}
	if err := safefs.Dir(top); err != nil {
		return nil, err
	}
	dir := filepath.Join(top, fmt.Sprintf("%d-%d", os.Getpid(), time.Now().UnixNano()))
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, err
	}
	if err := owner.Write(filepath.Join(dir, ownerFile)); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	mounts, err := os.OpenFile(filepath.Join(dir, mountsFile), os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	if err := unix.Mount(dir, dir, "none", unix.MS_BIND, ""); err != nil {
		mounts.Close()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("bind-mount %s on itself: %w", dir, err)
	}
	if err := unix.Mount("", dir, "none", unix.MS_SHARED, ""); err != nil {
		_ = unix.Unmount(dir, unix.MNT_DETACH|unix.UMOUNT_NOFOLLOW)
		mounts.Close()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("make %s a shared mount: %w", dir, err)
	}
	return &Pinned{dir: dir, mounts: mounts}, nil
}

func entryName(i int) string { return fmt.Sprintf("ns%06d", i) }

// Path is entry i's file.
func (m *Pinned) Path(i int) string { return filepath.Join(m.dir, entryName(i)) }

// Pin bind-mounts the calling thread's network namespace as entry i. The
// entry is noted as pending (inode 0) before it is made and with its inode
// once mounted, so that a devbulk killed in between leaves nothing CleanupPinned
// cannot prove its own.
func (m *Pinned) Pin(i int) error {
	p := m.Path(i)
	if _, err := fmt.Fprintf(m.mounts, "%s 0\n", entryName(i)); err != nil {
		return err
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW, 0o400)
	if err != nil {
		return err
	}
	f.Close()
	if err := unix.Mount("/proc/thread-self/ns/net", p, "none", unix.MS_BIND, ""); err != nil {
		os.Remove(p)
		return fmt.Errorf("bind-mount netns on %s: %w", p, err)
	}
	var st unix.Stat_t
	if err := unix.Stat(p, &st); err != nil {
		return err
	}
	_, err = fmt.Fprintf(m.mounts, "%s %d\n", entryName(i), st.Ino)
	return err
}

// Unpin unmounts entry i, which releases its namespace.
func (m *Pinned) Unpin(i int) error {
	p := m.Path(i)
	if err := unix.Unmount(p, unix.MNT_DETACH|unix.UMOUNT_NOFOLLOW); err != nil {
		return fmt.Errorf("unmount %s: %w", p, err)
	}
	return os.Remove(p)
}

// Remove unmounts whatever entries are left, then the directory itself.
// Only entries noted in "mounts" that are still nsfs mounts of the noted
// inode are unmounted (never through a symlink); anything else found in
// the directory is left, and so is the directory.
func (m *Pinned) Remove() (int, error) {
	if m.mounts != nil {
		m.mounts.Close()
	}
	noted, err := readMounts(filepath.Join(m.dir, mountsFile))
	if err != nil {
		return 0, err
	}
	ents, err := os.ReadDir(m.dir)
	if err != nil {
		return 0, err
	}
	var errs []error
	n := 0
	for _, e := range ents {
		name := e.Name()
		if name == ownerFile || name == mountsFile {
			continue
		}
		p := filepath.Join(m.dir, name)
		ino, ok := noted[name]
		if !ok {
			errs = append(errs, fmt.Errorf("%s is not one devbulk made: left alone", p))
			continue
		}
		if err := unmountEntry(p, ino); err != nil {
			errs = append(errs, err)
			continue
		}
		n++
	}
	if len(errs) > 0 {
		return n, errors.Join(errs...)
	}
	if err := unix.Unmount(m.dir, unix.MNT_DETACH|unix.UMOUNT_NOFOLLOW); err != nil && !errors.Is(err, unix.EINVAL) {
		return n, fmt.Errorf("unmount %s: %w", m.dir, err)
	}
	os.Remove(filepath.Join(m.dir, ownerFile))
	os.Remove(filepath.Join(m.dir, mountsFile))
	return n, os.Remove(m.dir)
}

// unmountEntry unmounts p when it is still the nsfs mount of inode ino, or
// of any inode for an entry noted as pending (0: devbulk was killed between
// the mount and the note; the entry is in devbulk's own 0700 directory, made
// with O_EXCL), then removes it. A file devbulk made and left unmounted is
// just removed.
func unmountEntry(p string, ino uint64) error {
	var lst unix.Stat_t
	if err := unix.Lstat(p, &lst); err != nil {
		return err
	}
	if lst.Mode&unix.S_IFMT == unix.S_IFLNK {
		return fmt.Errorf("%s is a symlink, not devbulk's mount: left alone", p)
	}
	var fs unix.Statfs_t
	if err := unix.Statfs(p, &fs); err != nil {
		return err
	}
	if fs.Type == unix.NSFS_MAGIC {
		if ino != 0 && lst.Ino != ino {
			return fmt.Errorf("%s holds namespace inode %d, not the %d devbulk mounted: left alone", p, lst.Ino, ino)
		}
		if err := unix.Unmount(p, unix.MNT_DETACH|unix.UMOUNT_NOFOLLOW); err != nil {
			return fmt.Errorf("unmount %s: %w", p, err)
		}
	}
	return os.Remove(p)
}

// readMounts reads a run's "mounts" file: entry name → inode.
func readMounts(path string) (map[string]uint64, error) {
	out := map[string]uint64{}
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW, 0)
	if errors.Is(err, os.ErrNotExist) {
		return out, nil // killed before it was made: nothing was mounted
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, ino, ok := strings.Cut(sc.Text(), " ")
		v, err := strconv.ParseUint(ino, 10, 64)
		if !ok || err != nil || strings.ContainsRune(name, '/') {
			return nil, fmt.Errorf("%s: malformed line %q", path, sc.Text())
		}
		if v != 0 || out[name] == 0 {
			out[name] = v // the inode, once noted, wins over "pending"
		}
	}
	return out, sc.Err()
}

// CleanedPins is a run directory that CleanupPinned removed.
type CleanedPins struct {
	Dir        string
	Namespaces int
}

// CleanupPinned removes the bind-mounted namespaces of every run
// whose devbulk process is gone (killed before it could dismantle them).
// Runs of a devbulk still running are left alone, and so is anything in a
// run directory that devbulk did not make (see Pinned.Remove). dir is
// where the runs were kept ("": DefaultPinDir).
func CleanupPinned(dir string) ([]CleanedPins, error) {
	top := pinDir(dir)
	ents, err := os.ReadDir(top)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if err := safefs.Dir(top); err != nil {
		return nil, err
	}
	sort.Slice(ents, func(i, j int) bool { return ents[i].Name() < ents[j].Name() })
	var done []CleanedPins
	var errs []error
	for _, e := range ents {
		dir := filepath.Join(top, e.Name())
		if e.Type()&os.ModeSymlink != 0 || !e.IsDir() {
			continue
		}
		o, err := owner.Read(filepath.Join(dir, ownerFile))
		if errors.Is(err, os.ErrNotExist) && os.Remove(dir) == nil {
			continue // killed right after making it: empty
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: no devbulk owner file (%v): left alone", dir, err))
			continue
		}
		if o.Alive() {
			continue
		}
		m := &Pinned{dir: dir}
		n, err := m.Remove()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		done = append(done, CleanedPins{Dir: m.dir, Namespaces: n})
	}
	return done, errors.Join(errs...)
}
