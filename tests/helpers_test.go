package tests

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/devbulk/devbulk/devices"
	"github.com/devbulk/devbulk/namespace"
	"github.com/devbulk/devbulk/nlbatch"
	"github.com/devbulk/devbulk/vm"
	"github.com/devbulk/devbulk/vm/vmtest"
)

// probe holds what this kernel can create, probed once.
var probe map[string]bool

func TestMain(m *testing.M) {
	vmtest.Main(m, probeKinds) // when this binary is the init of a VM (vm_test.go)
	if os.Geteuid() == 0 {
		probeKinds()
	}
	code := m.Run()
	if builtDir != "" {
		os.RemoveAll(builtDir)
	}
	os.Exit(code)
}

func probeKinds() {
	sup, err := devices.Probe()
	if err != nil {
		panic(err)
	}
	probe = devices.Works(sup)
}

func needRoot(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short runs the unit tests only")
	}
	if os.Geteuid() != 0 {
		t.Skip("integration tests need root (CAP_NET_ADMIN) to make network namespaces")
	}
}

// needGuest skips outside the VM: unloading a module on the host would take
// the host's own devices (bridges, veths of containers) with it.
func needGuest(t *testing.T) {
	t.Helper()
	if !vm.IsGuest() {
		t.Skip("module strategies run in the VM only: an unload on the host would take its own devices")
	}
}

// needKind skips when this kernel cannot create kind (the VM suite covers it).
func needKind(t *testing.T, kind string) *devices.Kind {
	t.Helper()
	needRoot(t)
	k, err := devices.Lookup(kind)
	if err != nil {
		t.Fatal(err)
	}
	if !probe[kind] {
		t.Skipf("this kernel cannot create %s", kind)
	}
	return k
}

// scratch is a throwaway namespace with a socket in it.
type scratch struct {
	ns   *namespace.Dedicated
	conn *nlbatch.Conn
}

func newScratch(t *testing.T) *scratch {
	t.Helper()
	ns, err := namespace.NewDedicated()
	if err != nil {
		t.Fatal(err)
	}
	// Wait for the dismantle, so the next test does not share the machine
	// with it.
	t.Cleanup(func() { _ = ns.ReleaseAndWait(time.Minute) })
	s := &scratch{ns: ns}
	s.conn = s.dial(t)
	return s
}

// dial opens one more socket in the scratch namespace, closed when the
// namespace is released.
func (s *scratch) dial(t *testing.T) *nlbatch.Conn {
	t.Helper()
	c, err := nlbatch.Dial(s.ns.NS.Handle, nlbatch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.ns.Hold(c)
	return c
}

// add creates one link the test owns (devbulk did not create it).
func (s *scratch) add(t *testing.T, l devices.Link) nlbatch.Link {
	t.Helper()
	if err := s.conn.Do(context.Background(), l.Message()); err != nil {
		t.Fatalf("creating %s: %v", l.Name, err)
	}
	got, err := s.conn.LinkByName(l.Name)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func (s *scratch) setGroup(t *testing.T, l nlbatch.Link, group uint32) {
	t.Helper()
	if err := s.conn.Do(context.Background(), nlbatch.SetGroupRequest(l.Index, group)); err != nil {
		t.Fatal(err)
	}
}

func (s *scratch) links(t *testing.T) map[int32]nlbatch.Link {
	t.Helper()
	ls, err := s.conn.Links()
	if err != nil {
		t.Fatal(err)
	}
	m := map[int32]nlbatch.Link{}
	for _, l := range ls {
		m[l.Index] = l
	}
	return m
}

// requirePresent fails the test for each of links no longer in the
// namespace (by ifindex and name); what says what deleted it.
func (s *scratch) requirePresent(t *testing.T, what string, links ...nlbatch.Link) {
	t.Helper()
	now := s.links(t)
	for _, l := range links {
		if got, ok := now[l.Index]; !ok || got.Name != l.Name {
			t.Errorf("%s (ifindex %d) was deleted by %s", l.Name, l.Index, what)
		}
	}
}

// requireGone fails the test for each of links still in the namespace.
func (s *scratch) requireGone(t *testing.T, what string, links ...nlbatch.Link) {
	t.Helper()
	now := s.links(t)
	for _, l := range links {
		if _, ok := now[l.Index]; ok {
			t.Errorf("%s (ifindex %d) survived %s", l.Name, l.Index, what)
		}
	}
}

// named is the scratch namespace as a record names it: "test", its nsfs
// inode and its cookie, as namespace.OpenFile reads them.
func (s *scratch) named(t *testing.T) namespace.NS {
	n, err := namespace.OpenFile(fmt.Sprintf("/proc/self/fd/%d", s.ns.NS.Handle))
	if err != nil {
		t.Fatal(err)
	}
	n.Close()
	n.Handle, n.Name = s.ns.NS.Handle, "test"
	return n
}

// besideOthers lets a long test run beside another once the package's
// serial tests are done (go test -parallel). It is for the tests whose
// checks hold whatever else the machine runs, on what no other test reads:
// a guest of their own (which mostly waits for grace periods, so two
// overlap well on two CPUs), or namespaces and records of their own; a
// figure they judge is measured side by side and far beyond noise (the
// source bisection's ×50). The judgements against a baseline from another
// boot, the ×2.6 bisection, the tests that check out the source tree and
// those that look at the whole host (its namespaces, its processes) stay
// serial.
func besideOthers(t *testing.T) {
	t.Helper()
	t.Parallel()
}
