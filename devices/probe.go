package devices

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/devbulk/devbulk/internal/nsthread"
	"github.com/devbulk/devbulk/nlbatch"
	"golang.org/x/sys/unix"
)

// Support is whether this kernel can create a kind, and why not.
type Support struct {
	Kind   *Kind
	OK     bool
	Reason string // empty when OK
}

// Probe tries to create one link of every kind in a scratch network
// namespace, which the kernel dismantles afterwards. The kernel loads a
// missing module by itself (rtnl-link-KIND alias) where it can.
func Probe() ([]Support, error) {
	ns, err := nsthread.New()
	if err != nil {
		return nil, err
	}
	defer ns.Close()
	c, err := nlbatch.Dial(ns, nlbatch.Options{})
	if err != nil {
		return nil, err
	}
	defer c.Close()

	var out []Support
	ok := map[string]bool{}
	for i, k := range All() {
		s := Support{Kind: k}
		err := probeOne(c, k, fmt.Sprintf("probe%d", i), ok)
		if err == nil {
			s.OK = true
			ok[k.Name] = true
		} else {
			s.Reason = reason(k, err)
		}
		out = append(out, s)
	}
	return out, nil
}

func probeOne(c *nlbatch.Conn, k *Kind, name string, ok map[string]bool) error {
	o := Options{Count: 1, Prefix: name}
	if k.NeedsLower {
		lk := LowerKind(ok)
		if lk == nil {
			return errors.New("no kind usable as lower device (dummy or ifb)")
		}
		lower := Link{Kind: lk, Name: name + "l"}
		if err := create(c, &lower); err != nil {
			return fmt.Errorf("lower device: %w", err)
		}
		l, err := c.LinkByName(lower.Name)
		if err != nil {
			return err
		}
		o.Lowers = []Lower{{Index: l.Index, Name: l.Name}}
	}
	links, err := k.Plan(o)
	if err != nil {
		return err
	}
	return create(c, &links[0])
}

func create(c *nlbatch.Conn, l *Link) error {
	res, _, err := c.Execute(context.Background(), [][]byte{l.Message()}, 1)
	if err != nil {
		return err
	}
	return res[0].Err
}

// LowerKind picks the kind devbulk creates as lower devices, among those
// known to work (by name): dummy, else ifb.
func LowerKind(works map[string]bool) *Kind {
	for _, k := range []*Kind{Dummy, Ifb} {
		if works[k.Name] {
			return k
		}
	}
	return nil
}

func reason(k *Kind, err error) string {
	if !errors.Is(err, unix.EOPNOTSUPP) {
		return err.Error()
	}
	if _, statErr := os.Stat("/proc/modules"); statErr != nil {
		return fmt.Sprintf("not built in and this kernel cannot load modules; needs %s=y", k.Config)
	}
	return fmt.Sprintf("not built in and no loadable module (%s.ko); needs %s", k.Module, k.Config)
}
