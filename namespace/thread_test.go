package namespace

import (
	"os"
	"path/filepath"
	"testing"
)

// After many namespaces made and entered, every thread of the process —
// including a main thread the runtime may have parked — is back in the
// original namespace, so no thread keeps a released namespace alive.
func TestThreadsReturnHome(t *testing.T) {
	if testing.Short() || os.Geteuid() != 0 {
		t.Skip("needs root (CAP_SYS_ADMIN) to make network namespaces; -short runs unit tests only")
	}
	home, err := os.Readlink("/proc/self/ns/net")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 50; i++ {
		ns, err := Unshare()
		if err != nil {
			t.Fatal(err)
		}
		var inside string
		if err := Run(ns, func() error {
			inside, err = os.Readlink("/proc/thread-self/ns/net")
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if inside == home {
			t.Fatal("Run did not enter the namespace")
		}
		ns.Close()
	}
	tasks, _ := filepath.Glob("/proc/self/task/*/ns/net")
	for _, p := range tasks {
		if got, err := os.Readlink(p); err == nil && got != home {
			t.Errorf("%s is in %s, not the original %s", p, got, home)
		}
	}
}
