package faults

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/devbulk/devbulk/namespace"
)

// sysfsTrue checks the kernel's own bookkeeping of a step's namespaces:
// each one's /sys/class/net, as the namespace sees it, lists exactly its
// links. A move whose device_rename failed breaks it both ways (6.1.192:
// docs/findings.md): the moved device has no entry there, and once it is
// deleted its entry stays, a name no device can take in that namespace
// again (nor in a later one the kernel allocates at the same address).
func sysfsTrue(spaces []*space) string {
	var verdicts []string
	for i, s := range spaces {
		links, err := s.conn.Links()
		if err != nil {
			return fmt.Sprintf("listing the step's namespace %d: %v", i+1, err)
		}
		var names, entries []string
		for _, l := range links {
			names = append(names, l.Name)
		}
		err = namespace.WithSysfs(s.d.NS.Handle, func() error {
			des, err := os.ReadDir("/sys/class/net")
			for _, de := range des {
				entries = append(entries, de.Name())
			}
			return err
		})
		if err != nil {
			return fmt.Sprintf("reading the step's namespace %d's sysfs: %v", i+1, err)
		}
		if v := disagreement(names, entries); v != "" {
			verdicts = append(verdicts, fmt.Sprintf("the step's namespace %d: %s", i+1, v))
		}
	}
	return strings.Join(verdicts, "; ")
}

// disagreement says how a namespace's links and its /sys/class/net
// entries differ ("" when they do not).
func disagreement(links, entries []string) string {
	var parts []string
	for _, l := range links {
		if !slices.Contains(entries, l) {
			parts = append(parts, fmt.Sprintf("link %s has no /sys/class/net entry", l))
		}
	}
	for _, e := range entries {
		// bonding_masters is the bonding driver's file, in every namespace
		// once it is loaded.
		if e != "bonding_masters" && !slices.Contains(links, e) {
			parts = append(parts, fmt.Sprintf("/sys/class/net/%s is no link's (a stale entry: no device named %s can be made there)", e, e))
		}
	}
	return strings.Join(parts, "; ")
}
