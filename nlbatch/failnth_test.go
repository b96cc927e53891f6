package nlbatch

import (
	"context"
	"errors"
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// A fault waits for a datagram of its type (a dump before it goes by
// untouched) and is disarmed by it; where the kernel has no fail-nth the
// fault says so and the request still runs (the real fault's two outcomes
// are tests/source_test.go's, on a kernel that injects).
func TestFaultArmsOneDatagramOfItsType(t *testing.T) {
	if _, err := os.Stat(FailNthPath); err == nil {
		t.Skip("this kernel injects faults: the arming is tested in the VM")
	}
	k := withLinks(1 << 20)
	c := NewConn(k, 256<<10, 1<<20)
	f := &Fault{Type: unix.RTM_DELLINK, N: 1}
	c.InjectFault(f)
	if _, err := c.Links(); err != nil {
		t.Fatal(err)
	}
	if f.Err != nil || f.Sent || c.fault != f {
		t.Fatalf("a dump touched the fault: %+v", f)
	}
	res, _, err := c.Execute(context.Background(), requests(2), 0)
	if err != nil || res[0].Err != nil {
		t.Fatalf("the request did not run: %v %v", err, res[0].Err)
	}
	if !errors.Is(f.Err, ErrNoFaultInjection) || !f.Sent || f.Injected || c.fault != nil {
		t.Errorf("fault %+v (armed still: %v); want ErrNoFaultInjection, disarmed", f, c.fault != nil)
	}
	if n := len(k.Links()); n != 1998 {
		t.Errorf("%d links left, want 1998", n)
	}
}
