package runs

import "github.com/devbulk/devbulk/namespace"

// Survey reads the store for a command that works beside other runs: the
// files that are not records. (Records whose namespace is gone are others'
// business: `devbulk runs` shows them, `devbulk cleanup` prunes them.)
func (s *Store) Survey() ([]Bad, error) {
	_, bad, err := s.Load()
	return bad, err
}

// staleness tells records whose namespaces are gone: for each, neither its
// --netns nor any namespace still held (a process, a descriptor or a bind
// mount) is the recorded one. The namespaces held are listed once, when
// first needed (a walk of /proc: tens of milliseconds on a busy host).
type staleness struct{ held map[uint64]string }

// gone reports whether namespace p is gone.
func (st *staleness) gone(p Place) bool {
	if ns, err := openRecorded(p); err == nil {
		ns.Close()
		return false
	}
	if st.held == nil {
		st.held = namespace.Discover()
	}
	path, ok := st.held[p.Inode]
	if !ok {
		return true
	}
	ns, err := namespace.OpenFile(path)
	if err != nil {
		return true
	}
	defer ns.Close()
	return !p.In(ns.ID)
}
