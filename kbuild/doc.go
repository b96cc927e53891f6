// Package kbuild builds a kernel from source for devbulk's VM: a git tree
// at a revision, or an unpacked or packed source (Debian's
// linux-source-*.tar.xz), with patches applied and commits reverted, out of
// tree, with devbulk's config fragment (guest.config) over a base config.
//
// A kernel specification names one as
//
//	src:PATH[@REV][+PART]...
//
// PATH is a directory (a git work tree, or an unpacked source) or a tarball
// (.tar, .tar.gz, .tar.xz); @REV a git revision of PATH (without it, the
// tree as it is, uncommitted changes included); each +PART, in order, is a
// patch FILE to apply, revert:REV (a commit of PATH's history to revert),
// config:BASE (the base config: devbulk, the default, allnoconfig with
// guest.config; defconfig; or a .config FILE) or fragment:FILE (more
// options, after devbulk's; fragment:debug is devbulk's debug.config, the
// kernel's own instruments for what a teardown breaks).
//
// The user's tree is only read: its commits are reached through a
// repository of devbulk's in the cache that borrows its objects (git's
// alternates), a directory is imported into one, and patches and reverts
// are applied in a work tree of devbulk's. Builds are out of tree (O=),
// one build directory per source and config, so that a step that changes
// a few files rebuilds incrementally; a built kernel is kept by the
// identity of its source tree (git's tree hash, patches and reverts
// included) and of its config inputs, and a second request rebuilds
// nothing.
package kbuild
