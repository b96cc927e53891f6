// Package namespace is devbulk's network-namespace handling, in one place
// as containernetworking's pkg/ns keeps it: code run inside a namespace on
// a locked OS thread (Run, Unshare), a --netns argument resolved and
// opened (Resolve, Open, OpenFile, OpenForSocket: an NS, with its inode and
// cookie), every namespace this machine holds found (Discover, Find,
// Named), the throwaway namespace devbulk makes for a run, released and
// waited for until the kernel has freed it (NewDedicated), and namespaces
// kept by bind mounts (NewPinned, CleanupPinned).
package namespace
