package bystander

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/devbulk/devbulk"
	"github.com/devbulk/devbulk/devices"
	"github.com/devbulk/devbulk/internal/registry"
	"github.com/devbulk/devbulk/nlbatch"
	"github.com/vishvananda/netns"
)

// ErrBad marks a bystander spec that is not valid.
var ErrBad = errors.New("bad bystander")

// MaxRate bounds a prober's rate (operations a second): beyond it the
// prober, not the teardown, would be what the kernel is busy with.
const MaxRate = 10000

// op is one operation: it returns how many of its dumps the kernel
// flagged interrupted (NLM_F_DUMP_INTR) and retried.
type op func(ctx context.Context) (interrupted int, err error)

// env is what an operation works in: the prober's own namespace and a
// socket there, a second namespace for peers (veth), and the kind the
// link operation creates.
type env struct {
	conn *nlbatch.Conn
	ns   netns.NsHandle
	peer netns.NsHandle // netns.None() unless the operation needs one
	kind *devices.Kind
}

// spec is an operation as registered by its file.
type spec struct {
	help string
	// rate is the default rate, low enough not to change what it measures
	// (docs/bystanders.md).
	rate float64
	// peer: the operation needs a second namespace.
	peer bool
	// needsKind: the operation creates devices of env.kind (the link
	// operation); makes, the kind of devices it creates itself (veth).
	needsKind bool
	makes     *devices.Kind
	make      func(e *env) (op, error)
}

var ops = registry.New[string, *spec]("bystander: operation", nil)

func register(name string, s *spec) { ops.Add(name, s) }

// Ops lists the operations, sorted.
func Ops() []string { return ops.Names() }

// Help is the one-line description of each operation, for a flag's usage.
func Help() string {
	var b []string
	for _, n := range Ops() {
		b = append(b, fmt.Sprintf("%s (%s; default %g/s)", n, ops.At(n).help, ops.At(n).rate))
	}
	return strings.Join(b, ", ")
}

// Config is a bystander: its operation and rate.
type Config struct {
	Op   string
	Rate float64 // operations a second
}

// Parse reads OP[@RATE]: an operation of Ops and a rate of 1..MaxRate a
// second (the operation's default when not given).
func Parse(s string) (Config, error) {
	name, rate, hasRate := strings.Cut(s, "@")
	sp := ops.At(name)
	if sp == nil {
		return Config{}, devbulk.Mark(ErrBad, "--bystander %q: unknown operation %q (valid: %s)", s, name, strings.Join(Ops(), ", "))
	}
	c := Config{Op: name, Rate: sp.rate}
	if hasRate {
		r, err := strconv.ParseFloat(rate, 64)
		if err != nil || !(r >= 1 && r <= MaxRate) { // NaN too
			return Config{}, devbulk.Mark(ErrBad, "--bystander %q: rate %q out of range: 1..%d operations a second", s, rate, MaxRate)
		}
		c.Rate = r
	}
	return c, nil
}

func (c Config) String() string { return fmt.Sprintf("%s@%g", c.Op, c.Rate) }
