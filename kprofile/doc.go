// Package kprofile measures where a teardown's time goes inside the
// kernel: the work of the unregister path (closing the devices, the
// notifier chain, sysfs removal) and its waits (synchronize_rcu,
// synchronize_rcu_expedited, rcu_barrier, the reference wait), or the
// netns cleanup worker's time by pernet exit handler.
//
// It uses the function_graph tracer, limited to the functions of interest
// (set_ftrace_filter) and rooted at the path's entry points
// (set_graph_function), and totals the trace per function: calls, the time
// from entry to return, and that time less the traced functions it called,
// so that a nested wait (synchronize_net waits in synchronize_rcu_expedited,
// dev_close_many in synchronize_net) is charged once. Pernet handlers are
// called through pointers, and Debian's 6.12 inlines the helpers that call
// them one ops at a time: devbulk reads the kernel's pernet_list itself
// (its address from /proc/kallsyms, the list from /proc/kcore, read only)
// and names each struct pernet_operations' pre_exit, exit, exit_batch and
// exit_batch_rtnl with kallsyms.
//
// It needs tracefs with CONFIG_FUNCTION_GRAPH_TRACER and, for the handlers,
// /proc/kcore and CONFIG_KALLSYMS_ALL (both Debian kernels; devbulk's VM
// mounts tracefs);
// elsewhere New fails with an error that matches devbulk.ErrNotSupported.
// Filtered this way the tracer adds a few percent to a phase (measured:
// see docs/profile.md); every function hooked would add several times that.
package kprofile
