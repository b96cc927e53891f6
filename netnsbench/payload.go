package netnsbench

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/vishvananda/netlink/nl"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/devbulk/devbulk/devices"
	"github.com/devbulk/devbulk/internal/child"
	"github.com/devbulk/devbulk/nlbatch"
)

// Payload is what each namespace gets before it is released.
type Payload struct {
	Name string
	// Kind is the device kind a devices:KIND:COUNT payload creates (nil
	// otherwise): check that the kernel has it before a run starts.
	Kind *devices.Kind
	// apply runs on a locked thread inside the namespace, with the run's
	// parent namespace and the namespace's sequence number.
	apply func(parent netns.NsHandle, seq int) error
	// needsParent: the payload pairs with the parent namespace.
	needsParent bool
}

// MaxPayloadDevices bounds devices:KIND:COUNT.
const MaxPayloadDevices = 10000

// ParsePayload parses lo-up, devices:KIND:COUNT, veth or exec:CMD.
func ParsePayload(s string) (Payload, error) {
	switch {
	case s == "" || s == "lo-up":
		return Payload{Name: "lo-up", apply: loUp}, nil
	case s == "veth":
		return Payload{Name: "veth", apply: vethToParent, needsParent: true}, nil
	case strings.HasPrefix(s, "exec:"):
		cmd := strings.TrimPrefix(s, "exec:")
		if strings.TrimSpace(cmd) == "" {
			return Payload{}, fmt.Errorf("payload exec: needs a command, as in exec:'ip link set lo up'")
		}
		return Payload{Name: s, apply: func(netns.NsHandle, int) error { return run(cmd) }}, nil
	case strings.HasPrefix(s, "devices:"):
		f := strings.Split(s, ":")
		if len(f) != 3 {
			return Payload{}, fmt.Errorf("payload %q: want devices:KIND:COUNT", s)
		}
		k, err := devices.Lookup(f[1])
		if err != nil {
			return Payload{}, fmt.Errorf("payload %q: %w", s, err)
		}
		if k.NeedsLower {
			return Payload{}, fmt.Errorf("payload %q: kinds with a lower device are not payloads; use dummy, ifb, veth, bridge, vxlan, ipip, gre or gretap", s)
		}
		n, err := strconv.Atoi(f[2])
		if err != nil || n < 1 || n > MaxPayloadDevices {
			return Payload{}, fmt.Errorf("payload %q: COUNT out of range: 1..%d", s, MaxPayloadDevices)
		}
		links, err := k.Plan(devices.Options{Count: n, Prefix: "p"})
		if err != nil {
			return Payload{}, fmt.Errorf("payload %q: %w", s, err)
		}
		return Payload{Name: s, Kind: k, apply: func(netns.NsHandle, int) error { return create(links) }}, nil
	}
	return Payload{}, fmt.Errorf("unknown payload %q (valid: lo-up, devices:KIND:COUNT, veth, exec:CMD)", s)
}

// loUp sets the namespace's loopback up, as `ip link set lo up` does.
func loUp(netns.NsHandle, int) error {
	c, err := nlbatch.DialHere(nlbatch.Options{RcvBuf: 64 << 10})
	if err != nil {
		return err
	}
	defer c.Close()
	req := nl.NewNetlinkRequest(unix.RTM_NEWLINK, 0)
	msg := nl.NewIfInfomsg(unix.AF_UNSPEC)
	msg.Index, msg.Flags, msg.Change = 1, unix.IFF_UP, unix.IFF_UP // lo is ifindex 1 in every namespace
	req.AddData(msg)
	return c.Do(context.Background(), req.Serialize())
}

func create(links []devices.Link) error {
	c, err := nlbatch.DialHere(nlbatch.Options{})
	if err != nil {
		return err
	}
	defer c.Close()
	reqs := make([][]byte, len(links))
	for i := range links {
		reqs[i] = links[i].Message()
	}
	res, _, err := c.Execute(context.Background(), reqs, 0)
	if err != nil {
		return err
	}
	for _, r := range res {
		if r.Err != nil {
			return r.Err
		}
	}
	return nil
}

// vethToParent creates a veth pair inside the namespace whose peer lives in
// the run's parent namespace, as container runtimes do.
func vethToParent(parent netns.NsHandle, seq int) error {
	c, err := nlbatch.DialHere(nlbatch.Options{RcvBuf: 64 << 10})
	if err != nil {
		return err
	}
	defer c.Close()
	l := devices.Link{Kind: devices.Veth, Name: "eth0", Peer: fmt.Sprintf("v%d", seq), PeerNetns: int(parent)}
	return c.Do(context.Background(), l.Message())
}

// run runs a shell command, which inherits the locked thread's namespace
// and dies with devbulk (a terminal's Ctrl-C reaches its process group).
func run(cmd string) error {
	out, err := child.Command(context.Background(), "/bin/sh", "-c", cmd).CombinedOutput()
	if err != nil {
		return fmt.Errorf("exec %q: %v: %s", cmd, err, strings.TrimSpace(string(out)))
	}
	return nil
}
