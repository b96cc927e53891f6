package batch

import (
	"fmt"
	"strings"

	"github.com/devbulk/devbulk/devices"
)

// CreateStrategy is how creation requests are sent.
type CreateStrategy string

// The creation strategies.
const (
	CreateSerial    CreateStrategy = "serial"
	CreatePipelined CreateStrategy = "pipelined"
)

// DeleteStrategy is a path to tear devices down.
type DeleteStrategy string

// The delete strategies (see the package documentation).
const (
	DeleteSerial    DeleteStrategy = "serial"
	DeletePipelined DeleteStrategy = "pipelined"
	DeleteParallel  DeleteStrategy = "parallel"
	DeleteGroup     DeleteStrategy = "group"
	DeleteNetns     DeleteStrategy = "netns"
	DeleteLower     DeleteStrategy = "lower"
	DeleteModule    DeleteStrategy = "module"
	DeleteAuto      DeleteStrategy = "auto"
)

// DeleteStrategies lists every delete strategy.
var DeleteStrategies = []DeleteStrategy{DeleteSerial, DeletePipelined, DeleteParallel,
	DeleteGroup, DeleteNetns, DeleteLower, DeleteModule, DeleteAuto}

// ParseCreate parses a creation strategy.
func ParseCreate(s string) (CreateStrategy, error) {
	switch c := CreateStrategy(s); c {
	case CreateSerial, CreatePipelined:
		return c, nil
	}
	return "", fmt.Errorf("unknown create strategy %q (valid: serial, pipelined)", s)
}

// ParseDelete parses a delete strategy.
func ParseDelete(s string) (DeleteStrategy, error) {
	for _, d := range DeleteStrategies {
		if string(d) == s {
			return d, nil
		}
	}
	var names []string
	for _, d := range DeleteStrategies {
		names = append(names, string(d))
	}
	return "", fmt.Errorf("unknown delete strategy %q (valid: %s)", s, strings.Join(names, ", "))
}

// OneBatch reports whether d takes the kernel's batch path: every device in
// one unregister batch (see the package documentation), not one per device.
func (d DeleteStrategy) OneBatch() bool {
	switch d {
	case DeleteGroup, DeleteAuto, DeleteNetns, DeleteLower, DeleteModule:
		return true
	}
	return false
}

// Applies reports whether strategy d can tear down links of kind k, and why
// not. dedicated says the devices live in a namespace devbulk made for them.
func (d DeleteStrategy) Applies(k *devices.Kind, dedicated bool) error {
	switch d {
	case DeleteLower:
		if !k.NeedsLower {
			return fmt.Errorf("%w: delete strategy lower applies to kinds with a lower device (vlan, macvlan), not %s", ErrNotApplicable, k.Name)
		}
	case DeleteNetns:
		if !dedicated {
			return fmt.Errorf("%w: delete strategy netns needs a namespace devbulk made for the devices (devbulk bench); it would take everything else in the namespace with it", ErrNotApplicable)
		}
	}
	return nil
}
