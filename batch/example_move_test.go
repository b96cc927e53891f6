//go:build root

// An example that needs root (CAP_NET_ADMIN, throwaway namespaces): `go
// test -tags root` runs it, as tests/run-all.sh does.

package batch_test

import (
	"context"
	"fmt"

	"github.com/devbulk/devbulk/batch"
	"github.com/devbulk/devbulk/devices"
	"github.com/devbulk/devbulk/namespace"
	"github.com/devbulk/devbulk/nlbatch"
)

// Move 100 ifb links from one throwaway namespace into another by their
// group, then delete them where they arrived.
func ExampleMove() {
	ctx := context.Background()
	from, to := newNamespace(), newNamespace()
	defer from.ns.Release()
	defer to.ns.Release()
	_, set, err := batch.CreateIn(ctx, from.conn, batch.CreateOptions{
		Kind: devices.Ifb, Devices: devices.Options{Count: 100, Prefix: "lab"}, Strategy: batch.CreatePipelined, NS: from.ns.NS,
	})
	if err != nil {
		fmt.Println(err) // not here: ifb missing, or no CAP_NET_ADMIN
		return
	}
	p, moved, err := batch.Move(ctx, batch.Target{Conn: from.conn, NS: from.ns.NS}, set, batch.MoveGroup,
		batch.MoveOptions{To: batch.Destination{Conn: to.conn, NS: to.ns.NS}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("moved %d of %d: %s .. %s there, %d left here\n", p.Moved, p.Devices, moved.Links[0].Name, moved.Links[len(moved.Links)-1].Name, len(set.Links))
	d, _, err := batch.Delete(ctx, batch.Target{Conn: to.conn, NS: to.ns.NS}, moved, batch.DeleteGroup, batch.DeleteOptions{})
	fmt.Println("deleted there:", d.Deleted, err)
	// Output:
	// moved 100 of 100: lab0 .. lab99 there, 0 left here
	// deleted there: 100 <nil>
}

type scratchNS struct {
	ns   *namespace.Dedicated
	conn *nlbatch.Conn
}

func newNamespace() scratchNS {
	ns, err := namespace.NewDedicated()
	if err != nil {
		panic(err)
	}
	c, err := nlbatch.Dial(ns.NS.Handle, nlbatch.Options{})
	if err != nil {
		panic(err)
	}
	ns.Hold(c)
	return scratchNS{ns, c}
}
