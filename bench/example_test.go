//go:build root

// Examples that need root (CAP_NET_ADMIN, throwaway namespaces): `go test
// -tags root` runs them, as tests/run-all.sh does.

package bench_test

import (
	"context"
	"fmt"

	"github.com/devbulk/devbulk/batch"
	"github.com/devbulk/devbulk/bench"
	"github.com/devbulk/devbulk/devices"
)

// Time 200 ifb links created pipelined and torn down two ways, one by one
// and by group, each in a fresh namespace; the phases' wall times are in
// r.Runs (`devbulk bench --kind ifb --count 200 --delete serial,group`).
func ExampleRun() {
	o := bench.Options{Kind: devices.Ifb, Counts: []int{200}, Create: batch.CreatePipelined,
		Deletes: []batch.DeleteStrategy{batch.DeleteSerial, batch.DeleteGroup}}
	if err := o.Resolve(); err != nil { // not here: err matches devbulk.ErrNotSupported
		fmt.Println(err)
		return
	}
	r, err := bench.Run(context.Background(), o)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range r.Runs {
		fmt.Printf("%s: %d created, %d deleted (%s)\n", c.Delete.Strategy, c.Create.Devices-c.Create.Failed, c.Delete.Deleted,
			map[bool]string{true: "timed", false: "not timed"}[c.Create.WallNS > 0 && c.Delete.WallNS > 0])
	}
	// Output:
	// serial: 200 created, 200 deleted (timed)
	// group: 200 created, 200 deleted (timed)
}
