// Package runs is devbulk's ownership of what outlives a process: the
// record of each run that created devices in a named (or the current)
// namespace, the Store that keeps the records, and the operations that use
// them — Create, Store.Move, Store.Delete and Store.Cleanup — with the
// guarantees docs/safety.md states:
//
//   - Nothing devbulk did not create is deleted, unmounted or written. A
//     device is a run's only while its ifindex, name and one of the run's
//     groups all match, looked up again right before each window of
//     requests; a device of someone else's that depends on a run's device
//     (an upper, a vxlan on it, a port of it, here or in another named
//     namespace) makes the delete refuse. Records are written through
//     O_EXCL temporary files in a root-only directory and are validated
//     when read.
//   - After any exit, kill -9 included, Cleanup leaves nothing of devbulk's:
//     a record is saved before the first device is created, marked
//     "deleting" before the first delete and "moving" (naming the
//     destination) before the first move, and its owner (pid, start time,
//     boot id) tells a dead run from a running one. A record follows its
//     devices into the namespace a move took them to, on both sides when
//     only some went.
//   - Reports count what the kernel confirmed (batch.Phase.Deleted), and say
//     what became of every recorded device that was not deleted.
package runs
