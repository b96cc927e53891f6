package bench

import (
	"bytes"
	"strings"
	"testing"

	"github.com/devbulk/devbulk/namespace"
)

// The table holds only columns with figures: iproute2's with --compare,
// request latencies with a serial phase; the method behind --explain.
func TestTableShowsOnlyColumnsWithFigures(t *testing.T) {
	plain := &Report{Runs: cycles(1000, []int64{999_700_000}, nil, map[string][]int64{"netns": {2e9}}, nil)}
	plain.Runs[0].Delete.DrainMethod = namespace.FreedMethod
	var b bytes.Buffer
	if err := plain.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, no := range []string{"iproute2", "ip/devbulk", "p50", "net_namespace slab", "e+"} {
		if strings.Contains(out, no) {
			t.Errorf("the table without --compare, latencies or --explain shows %q:\n%s", no, out)
		}
	}
	if !strings.Contains(out, " 1s ") {
		t.Errorf("999.7 ms is not printed as 1s:\n%s", out)
	}
	plain.Explain = true
	b.Reset()
	plain.WriteTable(&b)
	if !strings.Contains(b.String(), "net_namespace slab") {
		t.Errorf("--explain does not say how the netns wall is taken:\n%s", b.String())
	}
	compared := &Report{Runs: cycles(1000, []int64{1e8}, []int64{2e8}, map[string][]int64{"group": {1e8}}, map[string][]int64{"group": {1e8}})}
	b.Reset()
	compared.WriteTable(&b)
	if !strings.Contains(b.String(), "ip/devbulk") {
		t.Errorf("--compare's columns missing:\n%s", b.String())
	}
}
