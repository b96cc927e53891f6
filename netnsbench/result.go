package netnsbench

import (
	"github.com/devbulk/devbulk"
	"github.com/devbulk/devbulk/bystander"
	"github.com/devbulk/devbulk/kernlog"
	"github.com/devbulk/devbulk/kprofile"
)

// Report is the result document of a netns scenario.
type Report struct {
	devbulk.Header
	Scenario string `json:"scenario"` // churn, create or sequential
	Runs     []Run  `json:"runs"`
	// Comparisons (churn with CompareExec or ComparePayload, create with
	// ComparePayload) are the two forms side by side over the rounds: the
	// churn's or the creation's time, create's exec step and release, the
	// drain's, and the namespaces' setup times (p50, p99).
	Comparisons []Comparison `json:"comparisons,omitempty"`
	// Bystander and BystanderIdle (--bystander) are what a prober in a
	// namespace of its own waited during the whole scenario, and idle.
	Bystander     *bystander.Stats `json:"bystander,omitempty"`
	BystanderIdle *bystander.Stats `json:"bystander_idle,omitempty"`
	// KernelLog is what the kernel complained of during the scenario,
	// each complaint a finding (the command watches the log: package
	// kernlog).
	KernelLog *kernlog.Summary `json:"kernel_log,omitempty"`
	// Explain makes WriteTable say how figures were taken (--explain).
	Explain bool `json:"-"`
}

// Comparison is one form's times against the other's in one phase of a
// run: "churn" or "create" (CreateNS), "exec step" (ExecNS), "release"
// (ReleaseNS), "drain" (DrainNS), "setup p50" or "setup p99" (Setup).
type Comparison struct {
	Phase string `json:"phase"`
	devbulk.Comparison
}

// Run is one measured scenario run.
type Run struct {
	Mode       string `json:"mode"` // "direct" (syscalls) or "exec" (shell processes)
	Round      int    `json:"round,omitempty"`
	Workers    int    `json:"workers"`
	PerWorker  int    `json:"per_worker"`
	Namespaces int    `json:"namespaces"`
	Payload    string `json:"payload"`
	// Created is how many namespaces were made: Namespaces, unless the
	// run was Interrupted (Ctrl-C), when the rates are over Created and
	// neither release nor drain was measured.
	Created     int64 `json:"created"`
	Interrupted bool  `json:"interrupted,omitempty"`
	// CreateNS is the creation phase: in churn and sequential, from the
	// first creation to the last release (they interleave); in create,
	// until every namespace exists.
	CreateNS    int64   `json:"create_ns"`
	NetnsPerSec float64 `json:"netns_per_sec"`
	// UserNS and SysNS are the CPU time of devbulk (and, in exec mode, of
	// the processes it ran) during CreateNS.
	UserNS int64 `json:"user_ns"`
	SysNS  int64 `json:"sys_ns"`
	// KernelNS is the CPU time all CPUs spent in the kernel during CreateNS
	// (/proc/stat system+irq+softirq, 10 ms ticks), the cleanup worker's
	// included: UserNS/KernelNS compares devbulk's own work with the
	// kernel's (a ratio, not a share: the exec mode's exceeds 1).
	KernelNS int64 `json:"kernel_cpu_ns"`
	// ReleaseNS (create only) is the release of every namespace after
	// CreateNS: their unmounting.
	ReleaseNS int64 `json:"release_ns,omitempty"`
	// DrainNS runs from the last release until the kernel had freed every
	// namespace (DrainMethod); 0 when that could not be observed.
	DrainNS     int64  `json:"drain_ns"`
	DrainMethod string `json:"drain_method,omitempty"`
	// Setup is the distribution of the namespaces' setup times: unshare
	// and the payload (in create, the bind mount too; in exec mode, the
	// whole `unshare -n sh -c` process).
	Setup *Latency `json:"setup,omitempty"`
	// PeakBacklog is the most namespaces released but not yet freed at once.
	PeakBacklog int `json:"peak_backlog"`
	PeakObjects int `json:"peak_slab_objects"`
	// PeakSlabBytes is PeakObjects times the slab size of one struct net:
	// the struct itself, not the per-namespace memory hanging off it.
	PeakSlabBytes int64 `json:"peak_slab_bytes"`
	// Profile (--profile) is the cleanup worker's time by function, the
	// largest first: the pernet exit handlers, the RCU waits, the device
	// unregistering (see kprofile); shares are of WorkerNS, the time in
	// cleanup_net, and per_device_ns is per namespace.
	Profile  []kprofile.Entry `json:"profile,omitempty"`
	WorkerNS int64            `json:"worker_ns,omitempty"`
	// Rate (create only) is the creation rate curve, a point every step.
	Rate []RatePoint `json:"rate,omitempty"`
	// ExecNS, ExecPerSec and ExecRate (create with an exec step) are the
	// second phase: the command run in each kept namespace as `ip netns
	// exec` runs it, one after the other, and its rate curve.
	ExecStep   string      `json:"exec_step,omitempty"`
	ExecDone   int         `json:"exec_done,omitempty"` // namespaces the step ran in
	ExecNS     int64       `json:"exec_ns,omitempty"`
	ExecPerSec float64     `json:"exec_per_sec,omitempty"`
	ExecRate   []RatePoint `json:"exec_rate,omitempty"`
	Series     []Sample    `json:"series"`
}

// RatePoint is the creation rate over one step of the create curve.
type RatePoint struct {
	Created     int     `json:"created"`
	TNS         int64   `json:"t_ns"`
	NetnsPerSec float64 `json:"netns_per_sec"` // over the step ending here
}

// Sample is the state at one moment of a run.
type Sample struct {
	TNS      int64 `json:"t_ns"`
	Created  int64 `json:"created"`
	Released int64 `json:"released"`
	// Objects is the count of struct net beyond the baseline; Backlog is
	// Objects minus the namespaces still held (released, not yet freed).
	Objects int `json:"objects"`
	Backlog int `json:"backlog"`
}
