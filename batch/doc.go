// Package batch creates a run's devices and tears them down through each path
// the kernel offers, measuring every phase.
//
// Creation strategies: serial (one request, wait, next: what `ip link add`
// loops and netlink.LinkAdd do) and pipelined (many requests per sendmsg).
//
// Delete strategies, and the kernel path each exercises:
//
//	serial     one RTM_DELLINK at a time: one unregister batch per device
//	pipelined  many RTM_DELLINK per sendmsg: still one batch per device
//	parallel   K workers, each serial: concurrent callers share RCU barriers
//	group      one RTM_DELLINK with IFLA_GROUP: one batch for all
//	netns      release a namespace dedicated to the devices: the cleanup worker
//	           dismantles them in one batch, asynchronously
//	lower      delete the lower devices of vlan/macvlan links: the cascade
//	           gathers the upper devices into the lower's batch
//	module     unload the kind's module: every device of the kind, in every
//	           namespace, in one batch
//
// Devices can also leave a namespace alive: Move sends a set's links into
// another namespace (RTM_NEWLINK with IFLA_NET_NS_FD), by move strategy:
//
//	serial     one request at a time
//	pipelined  many per sendmsg
//	parallel   K workers, each serial
//	group      one request with IFLA_GROUP, which the kernel applies device
//	           by device
//
// Every move is the kernel's __dev_change_net_namespace, one device at a
// time under RTNL with its own RCU waits: no strategy batches them. Move
// names only the set's devices as Delete does, with the same look before
// each window and the same refusal of devices of others on them.
//
// Each strategy is a file of its own (delete_serial.go, delete_group.go,
// ...) that registers what it applies to, whether it is one kernel batch,
// how it runs and its iproute2 command; Delete only orchestrates: Ready,
// one look that answers the checks, the strategy's run, and the lookups
// that settle what the kernel did. DeleteStrategy.Ready is the one
// validation, for callers that refuse before deleting anything. What a
// create or delete records goes through a Ledger (package runs keeps
// records); the sockets a delete needs beyond Target.Conn (parallel
// workers, the scans of other namespaces) come through Target.Dialer, which
// a test points at a fake kernel (nlbatch/nlbatchtest).
//
// Ownership: a Set names what devbulk created — its group id (non-zero,
// checked unused), its name prefix and the ifindexes and names recorded at
// creation. Requests name only devices where all of these match. The kernel
// can take more with them: a lower device takes the vlans and macvlans on it,
// a module every device of its kinds. So every strategy refuses while a device
// devbulk did not create sits on one of its lower devices, and the module
// strategy while any namespace holds such a device of the module's kinds. A
// run killed before it recorded its ifindexes is owned by group and names
// (PREFIX<n>, PREFIXl<n>) alone.
package batch
