package batch

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// namespaces finds every network namespace reachable from /proc: those of
// every thread, those held open by file descriptors, and bind mounts (as
// made by `ip netns add`). Keys are nsfs inode numbers.
func namespaces() map[uint64]string {
	found := map[uint64]string{}
	add := func(path string) {
		var st unix.Stat_t
		if unix.Stat(path, &st) == nil {
			if _, ok := found[st.Ino]; !ok {
				found[st.Ino] = path
			}
		}
	}
	tasks, _ := filepath.Glob("/proc/[0-9]*/task/[0-9]*/ns/net")
	for _, p := range tasks {
		add(p)
	}
	fds, _ := filepath.Glob("/proc/[0-9]*/fd/*")
	for _, p := range fds {
		if target, err := os.Readlink(p); err == nil && strings.HasPrefix(target, "net:[") {
			add(p)
		}
	}
	// Bind mounts, in every mount namespace: reached through each
	// namespace's first process's root.
	mntSeen := map[string]bool{}
	infos, _ := filepath.Glob("/proc/[0-9]*/mountinfo")
	for _, info := range infos {
		pid := filepath.Dir(info)
		mnt, err := os.Readlink(pid + "/ns/mnt")
		if err != nil || mntSeen[mnt] {
			continue
		}
		mntSeen[mnt] = true
		f, err := os.Open(info)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if i := slices.Index(fields, "-"); i > 4 && i+1 < len(fields) && fields[i+1] == "nsfs" {
				add(pid + "/root" + fields[4])
			}
		}
		f.Close()
	}
	return found
}

// FindNetns returns a path to the network namespace with nsfs inode ino, if
// any thread, file descriptor or bind mount still holds it.
func FindNetns(ino uint64) (string, bool) {
	path, ok := namespaces()[ino]
	return path, ok
}
