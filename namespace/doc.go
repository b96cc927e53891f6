// Package namespace is devbulk's network-namespace handling, in one place
// as containernetworking's pkg/ns keeps it: code run inside a namespace on
// a locked OS thread (Run, Unshare), a --netns argument resolved and
// opened (Resolve, Open, OpenFile, Inode, Cookie), every namespace this
// machine holds found (Discover, Find, Named), and the throwaway namespace
// devbulk makes for a run, released and waited for until the kernel has
// freed it (Dedicated).
package namespace
