//go:build root

package faults

import (
	"context"
	"strings"
	"testing"

	"github.com/vishvananda/netlink"

	"github.com/devbulk/devbulk/batch"
	"github.com/devbulk/devbulk/devices"
	"github.com/devbulk/devbulk/runs"
)

// A moved veth's peer stays in the namespace it was made in, in no record,
// and goes with the veth (docs/safety.md): the record check takes it for the
// run's. It did not, and failed every step of veth's move sweep. A veth
// pair of others there still fails it.
func TestRecordTrueAfterAVethMove(t *testing.T) {
	ctx := context.Background()
	spaces, err := stepSpaces(Move)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, s := range spaces {
			s.d.Release()
		}
	}()
	store, err := runs.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	veth, _ := devices.Lookup("veth")
	co := batch.CreateOptions{Kind: veth, Devices: devices.Options{Count: 2, Prefix: "dbf"}, Strategy: batch.CreatePipelined, NS: spaces[0].d.NS}
	if _, _, err := store.Create(ctx, spaces[0].conn, co); err != nil {
		t.Fatal(err)
	}
	rep, err := store.Move(ctx, spaces[0].conn, runs.MoveOptions{NS: spaces[0].d.NS, To: spaces[1].d.NS, Strategy: batch.MoveGroup})
	if err := runsErr(rep, err); err != nil {
		t.Fatal(err)
	}
	if v := recordTrue(store, spaces); v != "" {
		t.Errorf("after the move: %s", v)
	}
	h, err := netlink.NewHandleAt(spaces[0].d.NS.Handle)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if err := h.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "other0"}, PeerName: "other1"}); err != nil {
		t.Fatal(err)
	}
	if v := recordTrue(store, spaces); !strings.HasPrefix(v, "2 devices left (other") || !strings.HasSuffix(v, "in a namespace no record names") {
		t.Errorf("a veth pair of others beside the moved run's peers: %q", v)
	}
	if v := finish(ctx, store, spaces[1:]); v != "" {
		t.Errorf("devbulk delete: %s", v)
	}
}
