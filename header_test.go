package devbulk

import (
	"os"
	"strings"
	"testing"
)

// The header names the machine: its memory and kernel command line, and
// the VM accelerator where the command line carries devbulk's parameter
// (devbulk vm's guests; the cases are literal command lines, since this
// one has none).
func TestNewHeader(t *testing.T) {
	h := NewHeader()
	b, _ := os.ReadFile("/proc/cmdline")
	if h.MemKiB <= 0 || h.Cmdline != strings.TrimSpace(string(b)) || h.CPUs <= 0 || h.Kernel == "" {
		t.Errorf("header %+v", h)
	}
	for cmdline, want := range map[string]string{
		"console=ttyS0 quiet devbulk.accel=tcg":  "tcg",
		"devbulk.accel=kvm ro devbulk.accel=tcg": "tcg", // the last wins, as in the kernel
		"BOOT_IMAGE=/vmlinuz root=/dev/vda1":     "",
		"xdevbulk.accel=kvm":                     "",
	} {
		if got, _ := KernelParam(cmdline, AccelParam); got != want {
			t.Errorf("KernelParam(%q) = %q, want %q", cmdline, got, want)
		}
	}
	if m := (Header{Kernel: "6.1.0", CPUs: 2, MemKiB: 1 << 20, Accel: "tcg"}).Machine(); m != "kernel 6.1.0  2 CPUs  1.0 GiB  in devbulk's VM (tcg)" {
		t.Errorf("Machine() = %q", m)
	}
	// What a kernel configuration added to the guest's command line is
	// named beside the kernel; devbulk vm's own parameters are not.
	vm := Header{Kernel: "6.1.0", CPUs: 2, Accel: "tcg",
		Cmdline: "console=ttyS0 panic=-1 quiet devbulk.accel=tcg devbulk.package=linux-image-6.1.0-57-cloud-amd64 rcu_nocbs=all preempt=full"}
	if m := vm.Machine(); m != "kernel 6.1.0  2 CPUs  in devbulk's VM (tcg)  booted with rcu_nocbs=all preempt=full" {
		t.Errorf("Machine() = %q", m)
	}
}
