package batch_test

import (
	"context"
	"fmt"

	"github.com/devbulk/devbulk/batch"
	"github.com/devbulk/devbulk/devices"
	"github.com/devbulk/devbulk/nlbatch"
	"github.com/devbulk/devbulk/nlbatch/nlbatchtest"
)

// Create 1000 ifb links pipelined and delete them with one group request.
// The example talks to nlbatch's fake kernel so that it runs anywhere; with
// the real one, the Conn comes from nlbatch.Dial(ns, nlbatch.Options{}) in a
// namespace of your own, and NS is that namespace.
func ExampleCreateIn() {
	kernel := &nlbatchtest.Kernel{}
	kernel.Add(nlbatchtest.Link{Name: "lo"})
	c := nlbatch.NewConn(kernel, 4<<20, 1<<20)
	ctx := context.Background()

	_, set, err := batch.CreateIn(ctx, c, batch.CreateOptions{
		Kind:     devices.Ifb,
		Devices:  devices.Options{Count: 1000, Prefix: "lab"},
		Strategy: batch.CreatePipelined,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	// The group is random, chosen unused: the run's mark for a group delete.
	fmt.Printf("created %d links, %s .. %s, all in the run's group: %t\n", len(set.Links),
		set.Links[0].Name, set.Links[len(set.Links)-1].Name, inGroup(kernel, set.Group) == 1000)

	p, _, err := batch.Delete(ctx, batch.Target{Conn: c}, set, batch.DeleteGroup, batch.DeleteOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s delete: %d deleted, %d left; the kernel holds %d link\n",
		p.Strategy, p.Deleted, len(p.Left), len(kernel.Links()))
	// Output:
	// created 1000 links, lab0 .. lab999, all in the run's group: true
	// group delete: 1000 deleted, 0 left; the kernel holds 1 link
}

func inGroup(k *nlbatchtest.Kernel, group uint32) int {
	n := 0
	for _, l := range k.Links() {
		if l.Group == group {
			n++
		}
	}
	return n
}
