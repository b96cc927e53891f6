// Package vm runs devbulk inside a small virtual machine, on a kernel that
// has the kinds the host kernel lacks (dummy, vlan, ipip, gre): it fetches
// or takes a kernel and its modules, builds an initramfs whose /init is a
// static devbulk, boots it under qemu (KVM when a probe boot works, TCG
// otherwise) and brings the guest's stdout, stderr and exit code back.
//
// The guest has no network device. Its serial ports are separate channels:
// ttyS0 the kernel console (kept in a log, shown on failure), ttyS1 devbulk's
// stdout, ttyS2 its stderr, ttyS3 its exit code — so console noise never
// mixes into the output.
package vm
