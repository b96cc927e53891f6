package devices

import (
	"encoding/binary"
	"fmt"

	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"

	"github.com/devbulk/devbulk/nlbatch"
)

// vxlanPort is the IANA VXLAN port; links differ by VNI.
const vxlanPort = 4789

// maxVNI is the largest VXLAN network identifier (24 bits).
const maxVNI = 1<<24 - 1

// Vxlan links get VNIs VNIBase..VNIBase+N-1 on port 4789, with
// vishvananda/netlink's defaults (learning off). The kernel refuses a VNI
// in use on the same port: a run in a namespace that holds vxlans gets
// free ones (FreeVNIs).
var Vxlan = register(&Kind{
	Name: "vxlan", KernelKiB: 43, Module: "vxlan", Config: "CONFIG_VXLAN", pick: pickVNIs,
	assign: func(l *Link, i int, o Options) { l.VNI = max(o.VNIBase, 1) + uint32(i) },
	check: func(o Options) error {
		if last := uint64(max(o.VNIBase, 1)) + uint64(o.Count) - 1; last > maxVNI {
			return fmt.Errorf("%d vxlans from VNI %d run past VNI %d", o.Count, max(o.VNIBase, 1), maxVNI)
		}
		return nil
	},
	data: func(l *Link, info *nl.RtAttr) {
		data := info.AddRtAttr(unix.IFLA_INFO_DATA, nil)
		data.AddRtAttr(nl.IFLA_VXLAN_ID, nl.Uint32Attr(l.VNI))
		for _, t := range []int{nl.IFLA_VXLAN_TTL, nl.IFLA_VXLAN_TOS, nl.IFLA_VXLAN_LEARNING,
			nl.IFLA_VXLAN_PROXY, nl.IFLA_VXLAN_RSC, nl.IFLA_VXLAN_L2MISS, nl.IFLA_VXLAN_L3MISS,
			nl.IFLA_VXLAN_UDP_ZERO_CSUM6_TX, nl.IFLA_VXLAN_UDP_ZERO_CSUM6_RX} {
			data.AddRtAttr(t, nl.Uint8Attr(0))
		}
		data.AddRtAttr(nl.IFLA_VXLAN_PORT, []byte{vxlanPort >> 8, vxlanPort & 0xff})
	},
	ipArgs: func(l *Link) string {
		return fmt.Sprintf("id %d dstport %d nolearning", l.VNI, vxlanPort)
	},
})

// FreeVNIs returns the first VNI of count consecutive ones that used does
// not hold: the first free range at or after a start drawn from seed (a
// run's group), so that runs created at the same time rarely collide, and
// repeated runs never.
func FreeVNIs(count int, seed uint32, used map[uint32]bool) (uint32, error) {
	if count < 1 || count > maxVNI {
		return 0, fmt.Errorf("%d vxlans: a namespace holds at most %d VNIs", count, maxVNI)
	}
	span := uint32(maxVNI - count + 1) // bases 1..span
	start := 1 + seed%span
	for tried := uint32(0); tried < span; {
		base := 1 + (start-1+tried)%span
		clash := uint32(0)
		for v := base; v < base+uint32(count); v++ {
			if used[v] {
				clash = v
			}
		}
		if clash == 0 {
			return base, nil
		}
		tried += clash - base + 1 // the next base past the last VNI in use
	}
	return 0, fmt.Errorf("no %d consecutive free VNIs in this namespace", count)
}

// VxlanData is what a vxlan's IFLA_INFO_DATA says: the device it sits on
// (IFLA_VXLAN_LINK: the safety checks need it, deleting that device takes
// the vxlan along) and its VNI (free VNIs are picked from those in use).
type VxlanData struct {
	Link int32
	VNI  uint32
}

// On is the device the vxlan sits on.
func (d VxlanData) On() int32 { return d.Link }

func init() {
	nlbatch.RegisterInfoData(Vxlan.Name, func(data []byte) nlbatch.KindData {
		var d VxlanData
		nlbatch.ForEachAttr(data, func(typ uint16, v []byte) {
			switch {
			case typ == unix.IFLA_VXLAN_LINK && len(v) >= 4:
				d.Link = int32(binary.NativeEndian.Uint32(v))
			case typ == unix.IFLA_VXLAN_ID && len(v) >= 4:
				d.VNI = binary.NativeEndian.Uint32(v)
			}
		})
		return d
	})
}

// pickVNIs gives o the first of o.Count consecutive VNIs that no link of
// existing uses (FreeVNIs, seeded by the run's group), unless o names one.
func pickVNIs(existing []nlbatch.Link, o *Options) error {
	if o.VNIBase != 0 {
		return nil
	}
	used := map[uint32]bool{}
	for _, l := range existing {
		if d, ok := l.Data.(VxlanData); ok && d.VNI != 0 {
			used[d.VNI] = true
		}
	}
	var err error
	o.VNIBase, err = FreeVNIs(o.Count, o.Group, used)
	return err
}
