// Package vmtest lets a Go test binary be the init of a devbulk VM, so that
// tests needing a kernel the host lacks run unchanged inside the VM: the host
// side boots the test binary with vm.Run and "-test.run ..." arguments.
package vmtest

import (
	"flag"
	"os"
	"testing"

	"github.com/devbulk/devbulk/vm"
)

// Main runs the tests as the VM's init and never returns, when this process
// is one; otherwise it returns at once. Call it first in TestMain. setup, if
// not nil, runs after the guest is up and before the tests.
func Main(m *testing.M, setup func()) {
	if !vm.IsGuest() {
		return
	}
	g, err := vm.StartGuest()
	if err != nil {
		vm.Fail(err)
	}
	os.Stdout, os.Stderr = g.Stdout, g.Stderr
	os.Args = append(os.Args[:1], g.Args...)
	flag.Parse()
	if setup != nil {
		setup()
	}
	g.Finish(m.Run())
}
