// Package netnsbench measures network-namespace churn: many namespaces
// created, given a payload and released, by parallel workers or by one thread
// in a loop, or all kept (bind-mounted) and released together — and how long
// the kernel's cleanup worker then takes to dismantle them (the drain), with
// the backlog of released-but-not-freed namespaces over time.
//
// A payload is a list of items each namespace gets in order (ParsePayload):
// loopback up, net.* sysctls (written through the namespace's own
// /proc/sys/net), veth pairs to a parent namespace, devices, IPVS virtual
// services over generic netlink (github.com/cloudflare/ipvs), a shell
// command. Kept namespaces can also run a command the way `ip netns exec`
// does (KeepOptions.ExecStep), a phase of its own.
//
// Workers use unshare(2) and setns(2) on locked OS threads (package namespace),
// not `unshare` processes, so devbulk's own cost stays small next to the
// kernel's; the exec mode runs the classic shell form for comparison. Churn
// namespaces are held only by devbulk's threads: if devbulk dies, the kernel
// dismantles them all. Kept namespaces are bind mounts under
// namespace.DefaultPinDir (or a directory of the caller's), which namespace.CleanupPinned removes
// after a crash. Namespaces with veth payloads pair with
// a parent namespace devbulk made for the run, never the host's.
package netnsbench
