// Package devices holds one factory per link kind devbulk creates: what the
// kernel needs to build the kind (module, Kconfig symbol, lower device), how
// the i-th link of a run is named and parameterized, and the exact
// RTM_NEWLINK request for it.
//
// Requests are byte-for-byte what vishvananda/netlink's LinkAdd sends for the
// same link (see testdata/linkadd and internal/linkaddgolden), so kinds a
// kernel lacks are still checked at the wire level. Names are always explicit:
// a "%d" template costs the kernel a scan of every device per link.
package devices
