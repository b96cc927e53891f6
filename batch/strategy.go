package batch

import (
	"context"
	"fmt"
	"strings"

	"github.com/devbulk/devbulk"
	"github.com/devbulk/devbulk/devices"
	"github.com/devbulk/devbulk/internal/registry"
	"github.com/devbulk/devbulk/nlbatch"
)

// CreateStrategy is how creation requests are sent.
type CreateStrategy string

// The creation strategies.
const (
	CreateSerial    CreateStrategy = "serial"
	CreatePipelined CreateStrategy = "pipelined"
)

// DeleteStrategy is a path to tear devices down. Each is implemented in a
// file of its own (delete_*.go) and registered there.
type DeleteStrategy string

// strategy is one way to tear a set down.
type strategy struct {
	// order places it in lists shown to users: the one-by-one paths
	// first, cheapest last.
	order int
	// oneBatch: every device goes in one unregister batch of the kernel.
	oneBatch bool
	// unloads: it unloads the kinds' modules, which takes their devices
	// in every namespace, not only the set's.
	unloads bool
	// shared says why its kernel work in one namespace is not that
	// namespace's own ("" when it is): several namespaces' deletes with it
	// do not run side by side in the kernel.
	shared string
	// applies says why the strategy cannot tear down links of kind k
	// (nil: whatever the kind) in a namespace devbulk made for them
	// (dedicated) or not; nil when it can.
	applies func(k *devices.Kind, dedicated bool) error
	// machine says why this machine cannot take the strategy for links of
	// kind k on lower devices of kind lower, with its own options, before
	// any is made; nil when it can (also when the field is nil).
	machine func(k, lower *devices.Kind, own Own) error
	// ready says why it cannot tear set s down in t now, before anything
	// is touched; nil when it can (also when the field is nil).
	ready func(t Target, s *Set, o DeleteOptions) error
	// tearDown deletes the set: most strategies are afterLook(run) or
	// markedFirst(run), a look, their run and the settling of what the
	// kernel did.
	tearDown func(ctx context.Context, d *job) error
	// ip is the iproute2 command that does the same; nil where iproute2
	// has none.
	ip func(s *Set) IPCommand
}

var strategies = registry.New[DeleteStrategy]("batch: delete strategy", func(s *strategy) int { return s.order })

// register adds a delete strategy; each strategy's file calls it from init.
func register(name DeleteStrategy, s *strategy) { strategies.Add(name, s) }

// DeleteStrategies lists every delete strategy: those that send one
// request per device first, then the kernel's batch paths.
func DeleteStrategies() []DeleteStrategy { return strategies.Names() }

// ParseCreate parses a creation strategy.
func ParseCreate(s string) (CreateStrategy, error) {
	switch c := CreateStrategy(s); c {
	case CreateSerial, CreatePipelined:
		return c, nil
	}
	return "", fmt.Errorf("unknown create strategy %q (valid: serial, pipelined)", s)
}

// ParseDelete parses a delete strategy; "auto", a user's default (devbulk
// delete's, a suite's), is another name for group: the batch path that is
// always safe.
func ParseDelete(s string) (DeleteStrategy, error) {
	if s == "auto" {
		return DeleteGroup, nil
	}
	if strategies.At(DeleteStrategy(s)) != nil {
		return DeleteStrategy(s), nil
	}
	return "", fmt.Errorf("unknown delete strategy %q (valid: %s, or auto: group)", s, strategies.List())
}

// OneBatch reports whether d takes the kernel's batch path: every device in
// one unregister batch (see the package documentation), not one per device.
func (d DeleteStrategy) OneBatch() bool { return d.impl().oneBatch }

// UnloadsModules reports whether d tears down by unloading the kinds'
// modules: every device of those kinds goes, in every namespace, so a
// prober beside it must make devices of another kind, and a veth peer a
// move left elsewhere goes too.
func (d DeleteStrategy) UnloadsModules() bool { return d.impl().unloads }

// Shared says why d's kernel work in one namespace is not that
// namespace's own, so that deletes in several namespaces at once do not run
// side by side; "" when it is.
func (d DeleteStrategy) Shared() string { return d.impl().shared }

// Applies reports whether strategy d can tear down links of kind k (nil:
// whatever the kind), and why not. dedicated says the devices live in a
// namespace devbulk made for them.
func (d DeleteStrategy) Applies(k *devices.Kind, dedicated bool) error {
	if s := d.impl(); s.applies != nil {
		return s.applies(k, dedicated)
	}
	return nil
}

// Ready reports why Delete would refuse to tear s down in t with strategy
// d before touching anything (Applies, then what the set and the machine
// need: lower devices devbulk made, a module it can unload, a namespace to
// open sockets in), or nil. Delete checks it first; a caller that deletes
// several sets checks each before deleting any.
func (d DeleteStrategy) Ready(t Target, s *Set, o DeleteOptions) error {
	if err := d.Applies(s.Kind, t.Dedicated != nil); err != nil {
		return err
	}
	if err := d.Machine(s.Kind, s.LowerKind, o.Own); err != nil {
		return err
	}
	if r := d.impl().ready; r != nil {
		return r(t, s, o)
	}
	return nil
}

// Machine reports why this machine cannot take strategy d for links of
// kind k on lower devices of kind lower (nil: none), with the strategy's
// own options, or nil: for a caller that refuses before making anything
// (the module strategy needs a module it can unload).
func (d DeleteStrategy) Machine(k, lower *devices.Kind, own Own) error {
	if err := ownFor(own, string(d)); err != nil {
		return err
	}
	if m := d.impl().machine; m != nil {
		return m(k, lower, own)
	}
	return nil
}

// IPCommand is an iproute2 command line: ip's arguments and standard input.
type IPCommand struct {
	Label string // how a result names it ("ip link del group")
	Args  []string
	Stdin string
}

// IPCommand returns the iproute2 command that deletes s as strategy d
// does, and false where iproute2 has none (parallel, netns, module).
func (d DeleteStrategy) IPCommand(s *Set) (IPCommand, bool) {
	ip := d.impl().ip
	if ip == nil {
		return IPCommand{}, false
	}
	return ip(s), true
}

// ipDelEach deletes devs one `ip -batch` line each.
func ipDelEach(devs []nlbatch.Link) IPCommand {
	var script strings.Builder
	for _, l := range devs {
		fmt.Fprintf(&script, "link del dev %s\n", l.Name)
	}
	return IPCommand{Label: "ip -batch link del", Args: []string{"-batch", "-"}, Stdin: script.String()}
}

// impl is d's implementation; an unknown strategy (one not parsed by
// ParseDelete) applies to nothing.
func (d DeleteStrategy) impl() *strategy {
	if s := strategies.At(d); s != nil {
		return s
	}
	return &strategy{applies: func(*devices.Kind, bool) error {
		return devbulk.Mark(ErrNotApplicable, "unknown delete strategy %q", d)
	}}
}
