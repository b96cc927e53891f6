// Package devbulk holds what every devbulk package shares: the one error
// that says "not here" (ErrNotSupported), the version, and the Header of
// every result document. The work is in the packages below it:
//
//	nlbatch      a NETLINK_ROUTE socket for bulk work: many requests per
//	             sendmsg, one result per request, lost ACKs told apart
//	nlbatch/nlbatchtest  a fake kernel for unit tests of code on nlbatch
//	devices      the link kinds: requirements, names, RTM_NEWLINK requests,
//	             what this kernel can create
//	batch        create a run's devices and delete them by each strategy,
//	             measuring every phase (what batch itself measures)
//	bench        timed create→delete cycles in throwaway namespaces, and
//	             their iproute2 twins; a phase with what the instruments
//	             beside it saw (bench.Phase)
//	runs         the records that outlive a process: create, list, move,
//	             delete and clean up by record
//	namespace    network namespaces: --netns resolved and opened, code run
//	             inside one, throwaway and kept namespaces and their drain
//	netnsbench   network-namespace churn and teardown
//	check        regression checks: suites, results, comparisons, KTAP,
//	             the estimate of a run's time
//	lava         fleets: LAVA jobs, their logs read back
//	kprofile     where a phase's time goes, by kernel function
//	bystander    what a teardown costs everyone else: a prober's latencies
//	bisect       the search for the kernel where a figure changed
//	kbuild       kernels built from source for the VM
//	vm, kmod, rcutrace, charts  the VM, module loading, RCU counts, SVG
//
// docs/layout.md has a row for every package (a test fails when one
// lacks it).
//
// The command line (cmd/devbulk) parses, calls these and prints; which
// flags go together is its own reasoning, where the flags are its own (a
// mode's rules are the mode's package's: bench's spread over namespaces).
package devbulk
