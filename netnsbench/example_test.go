//go:build root

// Examples that need root (CAP_SYS_ADMIN for namespaces): `go test -tags
// root` runs them, as tests/run-all.sh does.

package netnsbench_test

import (
	"context"
	"fmt"

	"github.com/devbulk/devbulk/netnsbench"
)

// Two workers each make, set lo up in, and release 50 namespaces; the
// report has the rate, the backlog series and the drain
// (`devbulk netns churn --workers 2 --per-worker 50`).
func ExampleChurn() {
	p, err := netnsbench.ParsePayload("lo-up")
	if err != nil {
		fmt.Println(err)
		return
	}
	r, err := netnsbench.Churn(context.Background(), netnsbench.ChurnOptions{Workers: 2, PerWorker: 50, Payload: p})
	if err != nil {
		fmt.Println(err)
		return
	}
	run := r.Runs[0]
	fmt.Printf("%d namespaces, drain seen: %t\n", run.Namespaces, run.DrainNS > 0)
	// Output: 100 namespaces, drain seen: true
}
