package namespace

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// Discover finds every network namespace reachable from /proc: those of
// every thread, those held open by file descriptors, and bind mounts (as
// made by `ip netns add`). Keys are nsfs inode numbers.
func Discover() map[uint64]string {
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

// Find returns a path to the network namespace with nsfs inode ino, if
// any thread, file descriptor or bind mount still holds it.
func Find(ino uint64) (string, bool) {
	path, ok := Discover()[ino]
	return path, ok
}

// Named lists the namespaces bind-mounted under Dir (as `ip netns add`
// makes them), by path, but the one ns is.
func Named(ns netns.NsHandle) ([]string, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(ns), &st); err != nil {
		return nil, err
	}
	ents, _ := os.ReadDir(Dir)
	var out []string
	for _, e := range ents {
		path := filepath.Join(Dir, e.Name())
		var pst unix.Stat_t
		if unix.Stat(path, &pst) == nil && pst.Ino != st.Ino {
			out = append(out, path)
		}
	}
	return out, nil
}
