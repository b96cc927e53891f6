package batch_test

import (
	"context"
	"fmt"

	"github.com/devbulk/devbulk/batch"
	"github.com/devbulk/devbulk/devices"
)

// Time 2000 ifb links created pipelined and deleted by group, in a throwaway
// namespace.
func ExampleBench() {
	r, err := batch.Bench(context.Background(), batch.BenchOptions{
		Kind:    devices.Ifb,
		Counts:  []int{2000},
		Create:  batch.CreatePipelined,
		Deletes: []batch.DeleteStrategy{batch.DeleteGroup},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range r.Runs {
		fmt.Printf("create %.3f ms/dev, delete %.3f ms/dev\n", c.Create.MsPerDevice, c.Delete.MsPerDevice)
	}
}
