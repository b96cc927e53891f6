package devices

import (
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// Bridge links are created empty, with the kernel's defaults.
var Bridge = register(&Kind{
	Name: "bridge", KernelKiB: 53, Module: "bridge", Config: "CONFIG_BRIDGE", NetnsLocal: true, WaitsPerDevice: true,
	// LinkAdd always sends an (empty) IFLA_INFO_DATA for bridges.
	data: func(_ *Link, info *nl.RtAttr) { info.AddRtAttr(unix.IFLA_INFO_DATA, nil) },
})
