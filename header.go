package devbulk

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/devbulk/devbulk/internal/result"
)

// Header is what every devbulk result document starts with: which tool,
// which version, which kernel booted how, on how many CPUs and how much
// memory, under which VM accelerator, when.
type Header struct {
	Tool    string `json:"tool"`
	Version string `json:"version"`
	Kernel  string `json:"kernel"`
	CPUs    int    `json:"cpus"`
	Date    string `json:"date"`
	// MemKiB is the machine's memory (MemTotal).
	MemKiB int64 `json:"mem_kib,omitempty"`
	// Cmdline is the kernel's command line (/proc/cmdline).
	Cmdline string `json:"cmdline,omitempty"`
	// Accel is the accelerator of devbulk's VM (kvm or tcg) when devbulk
	// ran in it (devbulk vm says so on the guest's command line); absent
	// elsewhere.
	Accel string `json:"accel,omitempty"`
	// KernelPackage is the Debian package devbulk vm took the kernel from,
	// when it did (also on the guest's command line).
	KernelPackage string `json:"kernel_package,omitempty"`
}

// AccelParam is the guest kernel command-line parameter that tells devbulk
// in its VM the accelerator the host chose; PackageParam, the Debian
// package its kernel came from.
const (
	AccelParam   = "devbulk.accel"
	PackageParam = "devbulk.package"
)

// NewHeader describes this machine and run now.
func NewHeader() Header {
	var u unix.Utsname
	_ = unix.Uname(&u)
	h := Header{Tool: "devbulk", Version: Version(), Kernel: unix.ByteSliceToString(u.Release[:]),
		CPUs: runtime.NumCPU(), Date: time.Now().UTC().Format(time.RFC3339)}
	h.MemKiB, _ = result.ProcKiB("/proc/meminfo", "MemTotal")
	h.Cmdline = Cmdline()
	h.Accel, _ = KernelParam(h.Cmdline, AccelParam)
	h.KernelPackage, _ = KernelParam(h.Cmdline, PackageParam)
	return h
}

// Cmdline is the running kernel's command line (/proc/cmdline).
func Cmdline() string {
	b, _ := os.ReadFile("/proc/cmdline")
	return strings.TrimSpace(string(b))
}

// KernelParam is the value of parameter key=value on a kernel command line
// (the last one given, as the kernel reads it).
func KernelParam(cmdline, key string) (string, bool) {
	v, found := "", false
	for _, f := range strings.Fields(cmdline) {
		if rest, ok := strings.CutPrefix(f, key+"="); ok {
			v, found = rest, true
		}
	}
	return v, found
}

// Machine describes the machine in one line, for the tables' first line.
func (h Header) Machine() string {
	s := fmt.Sprintf("kernel %s  %d CPUs", h.Kernel, h.CPUs)
	if h.MemKiB > 0 {
		s += fmt.Sprintf("  %.1f GiB", float64(h.MemKiB)/(1<<20))
	}
	if h.Accel != "" {
		s += "  in devbulk's VM (" + h.Accel + ")"
		if extra := h.AddedCmdline(); extra != "" {
			s += "  booted with " + extra
		}
	}
	return s
}

// AddedCmdline is, for devbulk's VM, what the kernel configuration added to
// the guest's command line (rcu_nocbs=all, ...): the parameters that are
// not devbulk vm's own.
func (h Header) AddedCmdline() string {
	var out []string
	for _, p := range strings.Fields(h.Cmdline) {
		if p == "quiet" || strings.HasPrefix(p, "console=") || strings.HasPrefix(p, "panic=") || strings.HasPrefix(p, "devbulk.") {
			continue
		}
		out = append(out, p)
	}
	return strings.Join(out, " ")
}
