package faults

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/devbulk/devbulk"
	"github.com/devbulk/devbulk/nlbatch"
	"github.com/devbulk/devbulk/vm"
)

// failslab is where the kernel's slab fault injection is set.
const (
	debugfs  = "/sys/kernel/debug"
	failslab = debugfs + "/failslab"
)

// setup makes the kernel fail what fail-nth names, sleeping allocations
// included (the kernel's default skips them, and a netlink request makes
// almost only those), and says each fault in the log with its stack: the
// step's site. It refuses outside devbulk's VM, and on a kernel without the
// options, naming them.
func setup() error {
	if !vm.IsGuest() {
		return devbulk.NotSupported("fault injection changes the kernel's failslab settings for every process: devbulk does it only in its VM (devbulk vm --kernel 'src:TREE' -- faults ...)")
	}
	if _, err := os.Stat(nlbatch.FailNthPath); err != nil {
		return devbulk.NotSupported("this kernel has no fault injection: %s is missing (CONFIG_FAULT_INJECTION)", nlbatch.FailNthPath)
	}
	if _, err := os.Stat(failslab); errors.Is(err, os.ErrNotExist) {
		if err := unix.Mount("debugfs", debugfs, "debugfs", 0, ""); err != nil && !errors.Is(err, unix.EBUSY) {
			return fmt.Errorf("mounting debugfs: %w", err)
		}
	}
	if _, err := os.Stat(failslab); err != nil {
		return devbulk.NotSupported("this kernel cannot fail slab allocations: %s is missing (CONFIG_FAILSLAB, CONFIG_FAULT_INJECTION_DEBUG_FS)", failslab)
	}
	// verbose_ratelimit_interval_ms 0: every fault's stack, not ten in 5 s
	// (an allocation made with __GFP_NOWARN is failed without one).
	for file, v := range map[string]string{"ignore-gfp-wait": "N", "verbose": "2", "verbose_ratelimit_interval_ms": "0"} {
		if err := os.WriteFile(failslab+"/"+file, []byte(v), 0); err != nil {
			return fmt.Errorf("failslab: %w", err)
		}
	}
	return nil
}
