package devbulk

import (
	"os"
	"strings"
	"testing"
)

// The header names the machine: its memory and kernel command line, and
// the VM accelerator only where the command line carries devbulk's
// parameter (devbulk vm's guests).
func TestNewHeader(t *testing.T) {
	h := NewHeader()
	b, _ := os.ReadFile("/proc/cmdline")
	if h.MemKiB <= 0 || h.Cmdline != strings.TrimSpace(string(b)) || h.CPUs <= 0 || h.Kernel == "" {
		t.Errorf("header %+v", h)
	}
	if want := strings.Contains(h.Cmdline, AccelParam+"="); (h.Accel != "") != want {
		t.Errorf("accel %q from command line %q", h.Accel, h.Cmdline)
	}
	if m := (Header{Kernel: "6.1.0", CPUs: 2, MemKiB: 1 << 20, Accel: "tcg"}).Machine(); m != "kernel 6.1.0  2 CPUs  1.0 GiB  in devbulk's VM (tcg)" {
		t.Errorf("Machine() = %q", m)
	}
}
