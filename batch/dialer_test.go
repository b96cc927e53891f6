package batch

import (
	"cmp"
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/devbulk/devbulk/devices"
	"github.com/devbulk/devbulk/nlbatch"
	"github.com/devbulk/devbulk/nlbatch/nlbatchtest"
)

// fakeDialer dials fake kernels: the set's (path "") and the other
// namespaces, named or not (a container's), by path. The set's namespace
// is fd ourFD to them.
type fakeDialer struct {
	k       *nlbatchtest.Kernel
	others  map[string]*nlbatchtest.Kernel
	unnamed map[string]*nlbatchtest.Kernel
	dials   atomic.Int32
}

const ourFD = 99

func (f *fakeDialer) Dial(path string, _ nlbatch.Options) (*nlbatch.Conn, error) {
	k := f.k
	if path != "" {
		if k = cmp.Or(f.others[path], f.unnamed[path]); k == nil {
			return nil, ErrNamespaceGone
		}
	}
	f.dials.Add(1)
	return nlbatch.NewConn(k.Socket(), 1<<20, 1<<20), nil
}

func (f *fakeDialer) Elsewhere() ([]string, error) {
	return slices.Sorted(maps.Keys(f.others)), nil
}

func (f *fakeDialer) Everywhere() ([]string, error) {
	all := append(slices.Collect(maps.Keys(f.others)), slices.Collect(maps.Keys(f.unnamed))...)
	slices.Sort(all)
	return all, nil
}

func (f *fakeDialer) Self() int { return ourFD }

// The scan before a module unload reaches every namespace through the
// Target's dialer, named or not: devices of the module's kinds that are
// not the set's are named, wherever they are; the set's are not.
func TestForeignDevicesEverywhere(t *testing.T) {
	k, s, c := fakeRun(3)
	k.Add(nlbatchtest.Link{Name: "mine-not", Kind: "ifb"})
	named, container := &nlbatchtest.Kernel{}, &nlbatchtest.Kernel{}
	named.Add(nlbatchtest.Link{Name: "lo"})
	container.Add(nlbatchtest.Link{Name: "lo"})
	container.Add(nlbatchtest.Link{Name: "ifb0", Kind: "ifb"})
	container.Add(nlbatchtest.Link{Name: "veth0", Kind: "veth"})
	fd := &fakeDialer{k: k, others: map[string]*nlbatchtest.Kernel{"/run/netns/b": named},
		unnamed: map[string]*nlbatchtest.Kernel{"/proc/42/ns/net": container}}
	got, err := ForeignDevices(devices.Ifb, s, Target{Conn: c, Dialer: fd})
	want := []string{"ifb0 (netns /proc/42/ns/net)", "mine-not (netns of the run)"}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("%v, %q; want %q", err, got, want)
	}
	if _, err := ForeignDevices(devices.Ifb, s, target(c)); !errors.Is(err, ErrNotApplicable) {
		t.Errorf("without a dialer: %v", err)
	}
}

// A veth of the set whose peer a move left in another namespace: the
// peer is the set's there (it names the veth back, in the set's namespace),
// where a veth of others in the same namespace on the same ifindex
// elsewhere is not.
func TestForeignDevicesSparesAPeerLeftBehind(t *testing.T) {
	k, there := &nlbatchtest.Kernel{}, &nlbatchtest.Kernel{NSIDs: map[uint32]int32{ourFD: 3}}
	k.Add(nlbatchtest.Link{Name: "lo"})
	there.Add(nlbatchtest.Link{Name: "lo"})
	peer := there.Add(nlbatchtest.Link{Name: "dbk0p", Kind: "veth", Parent: 2, LinkNetns: true, LinkNetnsID: 3})
	v := k.Add(nlbatchtest.Link{Name: "dbk0", Kind: "veth", Group: 7, Parent: peer.Index, LinkNetns: true, LinkNetnsID: 1})
	there.Add(nlbatchtest.Link{Name: "other", Kind: "veth", Parent: 9, LinkNetns: true, LinkNetnsID: 3})
	s := &Set{Kind: devices.Veth, Group: 7, Prefix: "dbk", Links: []nlbatch.Link{{Index: v.Index, Name: v.Name, Group: 7}}}
	fd := &fakeDialer{k: k, others: map[string]*nlbatchtest.Kernel{"/run/netns/a": there}}
	got, err := ForeignDevices(devices.Veth, s, Target{Conn: nlbatch.NewConn(k, 1<<20, 1<<20), Dialer: fd})
	if want := []string{"other (netns /run/netns/a)"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("%v, %q; want %q", err, got, want)
	}
}

// A strategy's own options given to another strategy are refused before
// anything is sent.
func TestOwnOptionsOfAnotherStrategyRefused(t *testing.T) {
	k, s, c := fakeRun(3)
	_, _, err := Delete(context.Background(), Target{Conn: c, Dialer: &fakeDialer{k: k}}, s, DeleteSerial, DeleteOptions{Own: ParallelOptions{Workers: 2}})
	if err == nil || !strings.Contains(err.Error(), "options of the parallel strategy given to the serial strategy") || k.Sends != 0 {
		t.Errorf("%v; %d datagrams sent", err, k.Sends)
	}
}

// The parallel strategy's workers each delete on a socket of their own,
// dialed through the Target's dialer: every device of the run goes, the
// devices of others (one in the run's group) stay.
func TestParallelDeleteOnWorkersSockets(t *testing.T) {
	k, s, c := fakeRun(40)
	k.Add(nlbatchtest.Link{Name: "other", Kind: "ifb"})
	k.Add(nlbatchtest.Link{Name: "intruder", Kind: "ifb", Group: 7})
	fd := &fakeDialer{k: k}
	p, _, err := Delete(context.Background(), Target{Conn: c, Dialer: fd}, s, DeleteParallel, DeleteOptions{Own: ParallelOptions{Workers: 4}})
	if err != nil || p.Deleted != 40 || kernelNames(k) != "lo other intruder" {
		t.Fatalf("%v; deleted %d; kernel %q", err, p.Deleted, kernelNames(k))
	}
	if n := fd.dials.Load(); n != 4 {
		t.Errorf("%d sockets dialed for 4 workers", n)
	}
	if p.Requests == nil || p.Requests.Count != 40 {
		t.Errorf("request latencies %+v, want 40 requests", p.Requests)
	}
}

// Without a namespace to dial in, the parallel strategy is refused before
// anything is sent.
func TestParallelDeleteNeedsADialer(t *testing.T) {
	k, s, c := fakeRun(3)
	_, _, err := Delete(context.Background(), target(c), s, DeleteParallel, DeleteOptions{})
	if !errors.Is(err, ErrNotApplicable) || k.Sends != 0 {
		t.Errorf("%v; %d datagrams sent", err, k.Sends)
	}
}

// A device in another named namespace that sits on one of the run's (by
// IFLA_LINK_NETNSID, the id that namespace gives the run's) refuses the
// delete, whatever the strategy; one whose lower device is the same
// ifindex in a third namespace does not.
func TestDependentInAnotherNamespaceRefuses(t *testing.T) {
	for _, d := range []DeleteStrategy{DeleteSerial, DeleteGroup} {
		for _, nsid := range []int32{5, 6} {
			k, s, c := fakeRun(3)
			away := &nlbatchtest.Kernel{NSIDs: map[uint32]int32{ourFD: 5}}
			away.Add(nlbatchtest.Link{Name: "lo"})
			away.Add(nlbatchtest.Link{Name: "mv0", Kind: "macvlan", Parent: s.Links[1].Index, LinkNetns: true, LinkNetnsID: nsid})
			fd := &fakeDialer{k: k, others: map[string]*nlbatchtest.Kernel{"/run/netns/b": away}}
			p, out, err := Delete(context.Background(), Target{Conn: c, Dialer: fd}, s, d, DeleteOptions{})
			if nsid == 5 {
				if !errors.Is(err, ErrForeignDependents) || !strings.Contains(err.Error(), "mv0 (netns b)") ||
					kernelNames(k) != "lo dbk0 dbk1 dbk2" || out.Acted {
					t.Errorf("%s, on ours: %v; kernel %q; acted %v", d, err, kernelNames(k), out.Acted)
				}
				continue
			}
			if err != nil || p.Deleted != 3 || len(away.Links()) != 2 {
				t.Errorf("%s, on a third namespace's: %v; deleted %d", d, err, p.Deleted)
			}
		}
	}
}

// A device in another namespace on a veth's peer refuses the delete, also
// when the set comes from a record, which keeps no peer ifindexes: the
// peers are the namespace's as it is now.
func TestDependentOnAPeerInAnotherNamespaceRefuses(t *testing.T) {
	for _, d := range []DeleteStrategy{DeleteSerial, DeleteGroup} {
		k := &nlbatchtest.Kernel{}
		k.Add(nlbatchtest.Link{Name: "lo"})                                                        // 1
		veth := k.Add(nlbatchtest.Link{Name: "dbk0", Kind: "veth", Group: 7, Parent: 3})           // 2
		peer := k.Add(nlbatchtest.Link{Name: "dbk0p", Kind: "veth", Group: 7, Parent: veth.Index}) // 3
		s := &Set{Kind: devices.Veth, Group: 7, Prefix: "dbk", Links: []nlbatch.Link{{Index: veth.Index, Name: veth.Name}}}
		away := &nlbatchtest.Kernel{NSIDs: map[uint32]int32{ourFD: 5}}
		away.Add(nlbatchtest.Link{Name: "lo"})
		away.Add(nlbatchtest.Link{Name: "mv0", Kind: "macvlan", Parent: peer.Index, LinkNetns: true, LinkNetnsID: 5})
		fd := &fakeDialer{k: k, others: map[string]*nlbatchtest.Kernel{"/run/netns/b": away}}
		_, out, err := Delete(context.Background(), Target{Conn: nlbatch.NewConn(k, 1<<20, 1<<20), Dialer: fd}, s, d, DeleteOptions{})
		if !errors.Is(err, ErrForeignDependents) || !strings.Contains(err.Error(), "mv0 (netns b)") || kernelNames(k) != "lo dbk0 dbk0p" || out.Acted {
			t.Errorf("%s: %v; kernel %q; acted %v", d, err, kernelNames(k), out.Acted)
		}
	}
}
