// Package bystander measures what a teardown costs everyone else on the
// host: a prober in a throwaway network namespace of its own issues one
// netlink operation (an Op: getlink, dump, link, addr, veth) at a fixed
// rate while devbulk works elsewhere, and reports, for any window of time
// (a phase), the operations' latency against their idle baseline.
//
// The prober is open loop: each operation is due at start + i/rate, and
// its latency counts from when it was due, not from when it was sent. An
// operation that waits two seconds for RTNL makes the ones due behind it
// late, and they count that wait (no coordinated omission). Operations are
// issued one at a time on one socket, so a stall's length is also the
// service time of the operation that met it (LongestStall).
//
// Each operation is a file of its own (op_*.go) that registers itself;
// Parse, the command line's help and the man page read the registry.
package bystander
