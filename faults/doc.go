// Package faults injects faults into devbulk's own requests, as syzkaller
// does, and checks what the kernel and devbulk do with them: for one path
// (a create, a group delete, a move), it sets fail-nth for the thread that sends
// the request (nlbatch.Fault) and sweeps N = 1, 2, … until the request runs
// whole without a fault. Each step has two verdicts:
//
//   - the kernel's: everything the step made can still be freed (its
//     throwaway namespaces are freed within a deadline, so no device in them
//     is waiting to become free), each namespace's /sys/class/net lists
//     exactly its links (a failed rename leaves a stale entry), and no
//     complaint in its log (kernlog);
//   - devbulk's: the request's error is reported, a device that exists
//     is in a record (runs), and devbulk's own delete finishes the run.
//
// Fault injection changes the kernel's global failslab settings: Sweep runs
// only in devbulk's VM, on a kernel with CONFIG_FAULT_INJECTION,
// CONFIG_FAILSLAB and CONFIG_FAULT_INJECTION_DEBUG_FS (devbulk's kernel
// from source has them).
package faults
