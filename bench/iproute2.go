package bench

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/vishvananda/netns"

	"github.com/devbulk/devbulk/batch"
	"github.com/devbulk/devbulk/devices"
	"github.com/devbulk/devbulk/internal/child"
	"github.com/devbulk/devbulk/namespace"
)

// ipCreate creates links with `ip -batch -` inside ns and measures it.
func ipCreate(ctx context.Context, ns netns.NsHandle, links []devices.Link) (*Phase, error) {
	var script strings.Builder
	for i := range links {
		script.WriteString(links[i].IPCommand() + "\n")
	}
	p := &Phase{Phase: batch.Phase{Name: "create", Tool: "iproute2", Strategy: "ip -batch", Devices: len(links)}}
	return p, runIP(ctx, ns, p, script.String(), "-batch", "-")
}

// ipDelete deletes s with the iproute2 command equivalent to strategy d,
// inside ns, and measures it. It returns a nil phase where iproute2 has no
// equivalent (parallel, netns, module).
func ipDelete(ctx context.Context, ns netns.NsHandle, d batch.DeleteStrategy, s *batch.Set) (*Phase, error) {
	ip, ok := d.IPCommand(s)
	if !ok {
		return nil, nil
	}
	p := &Phase{Phase: batch.Phase{Name: "delete", Tool: "iproute2", Strategy: ip.Label, Devices: len(s.Links)}}
	return p, runIP(ctx, ns, p, ip.Stdin, ip.Args...)
}

// runIP runs ip with args and stdin inside ns, filling p's wall and CPU time
// (those of the ip process).
func runIP(ctx context.Context, ns netns.NsHandle, p *Phase, stdin string, args ...string) error {
	path, err := exec.LookPath("ip")
	if err != nil {
		return fmt.Errorf("--compare iproute2 needs the ip command (apt-get install iproute2): %w", err)
	}
	cmd := child.Command(ctx, path, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	var wall time.Duration
	err = namespace.Run(ns, func() error {
		start := time.Now()
		err := cmd.Run()
		wall = time.Since(start)
		return err
	})
	if cmd.ProcessState != nil {
		p.WallNS = wall.Nanoseconds()
		p.UserNS = cmd.ProcessState.UserTime().Nanoseconds()
		p.SysNS = cmd.ProcessState.SystemTime().Nanoseconds()
		p.FillRates()
	}
	if err != nil {
		return fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, firstLine(stderr.String()))
	}
	return nil
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return l
}
