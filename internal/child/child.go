// Package child starts the programs devbulk runs (ip, qemu, payload
// commands) so that they die with devbulk: killed when ctx ends (Ctrl-C)
// and, through PR_SET_PDEATHSIG, when devbulk itself is killed, even by
// SIGKILL. The parent-death signal fires when the OS thread that started
// the child exits: callers wait for the child on the goroutine that started
// it (as exec.Cmd.Run does), which keeps a locked thread alive meanwhile.
package child

import (
	"context"
	"os/exec"
	"syscall"
)

// Command is exec.CommandContext with a parent-death SIGKILL.
func Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return cmd
}
