package bench

import (
	"github.com/devbulk/devbulk/batch"
	"github.com/devbulk/devbulk/bystander"
	"github.com/devbulk/devbulk/kprofile"
)

// Phase is a phase as a bench (or a command with a bystander) reports it:
// what batch measured, and what the instruments beside it saw. Its JSON
// holds batch.Phase's fields, then these.
type Phase struct {
	batch.Phase
	// Bystander (--bystander) is what a prober in another namespace waited
	// during the phase (see package bystander).
	Bystander *bystander.Stats `json:"bystander,omitempty"`
	// RCU counts, with --trace-rcu, the calls to each RCU wait and the
	// unregister batches ("unregister_batches") during the phase,
	// system-wide (the netns cleanup worker included).
	RCU map[string]int `json:"rcu_calls,omitempty"`
	// Profile (--profile) is where the phase's time went in the kernel, by
	// function, the largest first (see package kprofile); UnattributedNS is
	// the wall time it does not account for.
	Profile        []kprofile.Entry `json:"profile,omitempty"`
	UnattributedNS int64            `json:"unattributed_ns,omitempty"`
	// KernelMem (creation phases) is what the devices cost the kernel in
	// memory.
	KernelMem *KernelMem `json:"kernel_mem,omitempty"`
}
