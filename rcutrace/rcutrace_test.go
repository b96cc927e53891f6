package rcutrace

import (
	"errors"
	"os"
	"testing"
	"time"

	"github.com/devbulk/devbulk/namespace"
	"github.com/devbulk/devbulk/vm/vmtest"
)

func TestMain(m *testing.M) {
	vmtest.Main(m, nil) // the VM suite boots this test binary (tests/vm_test.go)
	os.Exit(m.Run())
}

// Where tracing works (the VM suite), a netns whose dismantle waits for RCU
// is counted; elsewhere New says why not.
func TestCountsAnRCUWait(t *testing.T) {
	if testing.Short() || os.Geteuid() != 0 {
		t.Skip("needs root (tracing); -short runs unit tests only")
	}
	c, err := New()
	if errors.Is(err, ErrUnavailable) {
		t.Skipf("not here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// Every netns dismantle waits for RCU and unregisters its loopback.
	ns, err := namespace.Unshare()
	if err != nil {
		t.Fatal(err)
	}
	ns.Close()
	// The bound only catches a count that never comes; the dismantle is
	// asynchronous and takes as long as the machine needs.
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		n, err := c.Read()
		if err != nil {
			t.Fatal(err)
		}
		if n["rcu_barrier"]+n["synchronize_rcu"]+n["synchronize_rcu_expedited"]+n["synchronize_net"] > 0 && n[Batches] > 0 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Error("no RCU wait counted in 2 minutes")
}
