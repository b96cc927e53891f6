// Package bench times whole create→delete cycles: for every count, delete
// strategy and repetition, a fresh throwaway namespace, the run's lower
// devices made beforehand (unmeasured), the links created and deleted by
// package batch, each phase measured, and the namespace released and its
// dismantling awaited before the next cycle starts. With Options.Compare,
// iproute2 does the same work in a namespace of its own (`ip -batch`, `ip
// link del group`). The Report is the document of `devbulk bench --json`.
package bench
