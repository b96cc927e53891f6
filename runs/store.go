package runs

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/devbulk/devbulk/internal/safefs"
)

// DefaultDir is where devbulk keeps its records.
const DefaultDir = "/run/devbulk/runs"

// maxRecordBytes bounds what is read of one record file: 100 000 devices
// take about 10 MB.
const maxRecordBytes = 64 << 20

// Store keeps the records of runs, one file per run named after its group,
// in a directory only root may write. A Store is used by one goroutine at a
// time: it remembers what Load read.
type Store struct {
	Dir string
	// read holds, for each record the last Load returned, the bytes it was
	// parsed from and what they parsed to: reread parses a record again
	// only when its file changed.
	read map[*Record]loaded
	// absent: the directory did not exist when the store was opened
	// (OpenExisting), and the store holds nothing, whatever appears there
	// later without the checks of Open.
	absent bool
}

// OpenExisting opens the store in dir to read and change what it holds,
// not to make it: a directory that does not exist holds no runs (a
// mistyped DEVBULK_STATE_DIR is not made by a delete). An unsafe one is
// refused, as by Open.
func OpenExisting(dir string) (*Store, error) {
	if _, err := os.Lstat(dir); errors.Is(err, os.ErrNotExist) {
		return &Store{Dir: dir, absent: true}, nil
	}
	return Open(dir)
}

// ErrUnsafeDir reports a state directory someone other than root could
// write (or a symlink): records from there could make devbulk delete
// anything.
var ErrUnsafeDir = safefs.ErrUnsafe

// Open returns the store in dir, creating dir (mode 0700) when missing. It
// refuses a dir that is a symlink, not a directory, not owned by root (or
// the caller), or writable by group or others.
func Open(dir string) (*Store, error) {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return nil, err
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, err
	}
	if err := safefs.Dir(dir); err != nil {
		return nil, err
	}
	return &Store{Dir: dir}, nil
}

// Save writes the record atomically: a new temporary file in the store
// (O_EXCL, so a planted file or symlink is never written through), synced,
// then renamed over the record.
func (s *Store) Save(r *Record) error {
	b, err := json.Marshal(r) // compact: big records are rewritten at every state change
	if err != nil {
		return err
	}
	if err := safefs.Replace(s.path(r), b, 0o600); err != nil {
		return fmt.Errorf("saving %s: %w", r, err)
	}
	return syncDir(s.Dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

func (s *Store) path(r *Record) string { return filepath.Join(s.Dir, r.FileName()) }

// Remove deletes the record.
func (s *Store) Remove(r *Record) error {
	err := os.Remove(s.path(r))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// Bad is a record file that could not be used: malformed (Err wraps
// ErrMalformed; Cleanup moves it aside) or unreadable now.
type Bad struct {
	File string
	Err  error
}

// inode is the namespace inode a bad record file names, when it can be read
// at all (0 otherwise): a malformed record of another namespace is no
// reason to doubt a delete here.
func (b Bad) inode() uint64 {
	f, err := os.OpenFile(b.File, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		return 0
	}
	defer f.Close()
	var r struct {
		Inode uint64 `json:"netns_inode"`
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() || json.NewDecoder(io.LimitReader(f, maxRecordBytes)).Decode(&r) != nil {
		return 0
	}
	return r.Inode
}

// Load reads every record. Files that are not valid records are returned
// as bad, not as an error: one broken file must not stop every command.
func (s *Store) Load() ([]*Record, []Bad, error) {
	s.read = map[*Record]loaded{}
	if s.absent {
		return nil, nil, nil
	}
	entries, err := os.ReadDir(s.Dir) // unlike a glob, says when the directory cannot be read
	if err != nil {
		return nil, nil, err
	}
	var files []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".json") {
			files = append(files, filepath.Join(s.Dir, e.Name()))
		}
	}
	var recs []*Record
	var bad []Bad
	for _, f := range files {
		b, err := readRecordFile(f)
		var r *Record
		if err == nil {
			r, err = parse(filepath.Base(f), b)
		}
		if err != nil {
			bad = append(bad, Bad{File: f, Err: err})
			continue
		}
		recs = append(recs, r)
		s.read[r] = loaded{b, r.clone()} // as parsed: choose may turn r to face the other side
	}
	return recs, bad, nil
}

// loaded is a record file as Load read it: its bytes and what they parse
// to.
type loaded struct {
	bytes []byte
	as    *Record
}

// readRecord reads one record file without following a symlink.
func readRecord(path string) (*Record, error) {
	b, err := readRecordFile(path)
	if err != nil {
		return nil, err
	}
	return parse(filepath.Base(path), b)
}

// readRecordFile reads the bytes of one record file, without following a
// symlink: a regular file of at most maxRecordBytes.
func readRecordFile(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if errors.Is(err, unix.ELOOP) {
		return nil, fmt.Errorf("%w: %s is a symlink", ErrMalformed, path)
	}
	if err != nil {
		return nil, err // not the record's fault: not moved aside
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s is not a regular file", ErrMalformed, path)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxRecordBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxRecordBytes {
		return nil, fmt.Errorf("%w: %s is larger than %d bytes", ErrMalformed, path, maxRecordBytes)
	}
	return b, nil
}

// Quarantine moves a bad record aside, into the store's malformed/
// directory, so that it is reported once and kept for a person to read.
func (s *Store) Quarantine(b Bad) (string, error) {
	dir := filepath.Join(s.Dir, "malformed")
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return "", err
	}
	if err := safefs.Dir(dir); err != nil {
		return "", err
	}
	to := filepath.Join(dir, strings.TrimSuffix(filepath.Base(b.File), ".json")+time.Now().UTC().Format(".20060102T150405.000000000"))
	// rename moves a symlink itself, never its target.
	return to, os.Rename(b.File, to)
}

// groupRecorded reports whether a record uses group g.
func groupRecorded(recs []*Record, g uint32) bool {
	for _, r := range recs {
		if r.Group == g || slices.Contains(r.Marks, g) {
			return true
		}
	}
	return false
}
