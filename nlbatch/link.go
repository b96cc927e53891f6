package nlbatch

import (
	"encoding/binary"
	"unique"

	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"

	"github.com/devbulk/devbulk/nlbatch/internal/nlwire"
)

// rtextFilterSkipStats is RTEXT_FILTER_SKIP_STATS (include/uapi/linux/rtnetlink.h).
const rtextFilterSkipStats = 1 << 3

// Link is what devbulk needs to know of one network device.
type Link struct {
	Index  int32
	Name   string
	Kind   string // IFLA_INFO_KIND; empty for devices without rtnl ops (lo)
	Group  uint32
	Parent int32 // IFLA_LINK: the lower device of a vlan or macvlan
	Flags  uint32
	// ParentNetnsID is IFLA_LINK_NETNSID: Parent is an ifindex in the
	// namespace with this id (as this namespace numbers it), not in this one.
	// Valid only when HasParentNetns.
	ParentNetnsID  int32 `json:",omitempty"`
	HasParentNetns bool  `json:",omitempty"`
	// Master is IFLA_MASTER: the bridge or bond the device is enslaved to.
	Master int32 `json:",omitempty"`
	// Data is what the link's kind says of it in IFLA_INFO_DATA, read by
	// the parser the kind registered (RegisterInfoData): nlbatch knows no
	// kind.
	Data KindData `json:"-"`
}

// KindData is a link's kind-specific part, as its kind's parser read it
// from IFLA_INFO_DATA.
type KindData interface {
	// On is the ifindex of a device in the same namespace that the link
	// sits on besides IFLA_LINK (a vxlan's IFLA_VXLAN_LINK): deleting it
	// takes the link along. 0: none.
	On() int32
}

// infoData reads IFLA_INFO_DATA, whose attributes each kind numbers its
// own way, by kind name.
var infoData = map[string]func(data []byte) KindData{}

// ForEachAttr walks a run of netlink attributes (an IFLA_INFO_DATA, say),
// bounds-checked, stopping at the first malformed one; the type has the
// NESTED and NET_BYTEORDER bits cleared.
func ForEachAttr(b []byte, fn func(typ uint16, value []byte)) { nlwire.ForEachAttr(b, fn) }

// RegisterInfoData makes ParseLink read the IFLA_INFO_DATA of links of
// kind with parse, into Link.Data. It is called from init (package devices
// does, for the kinds with data of their own), never concurrently with
// ParseLink.
func RegisterInfoData(kind string, parse func(data []byte) KindData) { infoData[kind] = parse }

// Lowers lists the ifindexes in the same namespace whose deletion deletes
// or changes l: its IFLA_LINK lower, its master and what its kind's data
// says it sits on.
func (l Link) Lowers() []int32 {
	var out []int32
	if l.Parent != 0 && !l.HasParentNetns {
		out = append(out, l.Parent)
	}
	if l.Master != 0 {
		out = append(out, l.Master)
	}
	if l.Data != nil && l.Data.On() != 0 {
		out = append(out, l.Data.On())
	}
	return out
}

// Links lists every link of the socket's namespace. Statistics are not
// requested (RTEXT_FILTER_SKIP_STATS), which keeps dumps of tens of thousands
// of links small.
func (c *Conn) Links() ([]Link, error) { return c.LinksSized(0) }

// LinksSized is Links with room for hint links from the start: a caller
// that knows about how many there are spares the copies a growing slice
// makes (200 000 links are 17 MB).
func (c *Conn) LinksSized(hint int) ([]Link, error) {
	links := make([]Link, 0, hint)
	err := c.dumpLinks(func() { links = links[:0] }, func(l Link) { links = append(links, l) })
	return links, err
}

// dumpLinks dumps every link through Dump, parsed, to each.
func (c *Conn) dumpLinks(restart func(), each func(Link)) error {
	return c.Dump(GetLinkRequest(0, ""), restart, func(msg []byte) error {
		l, err := ParseLink(msg)
		if err == nil {
			each(l)
		}
		return err
	})
}

// LinkByName looks one link up; the error wraps unix.ENODEV when absent.
func (c *Conn) LinkByName(name string) (Link, error) {
	return c.getLink(GetLinkRequest(0, name))
}

// LinkByIndex looks one link up; the error wraps unix.ENODEV when absent.
func (c *Conn) LinkByIndex(index int32) (Link, error) {
	return c.getLink(GetLinkRequest(index, ""))
}

// GetLinkRequest builds an RTM_GETLINK for one link by index or name, or,
// with neither, the request of a dump of all links.
func GetLinkRequest(index int32, name string) []byte {
	req := nl.NewNetlinkRequest(unix.RTM_GETLINK, 0)
	msg := nl.NewIfInfomsg(unix.AF_UNSPEC)
	msg.Index = index
	req.AddData(msg)
	if name != "" {
		req.AddData(nl.NewRtAttr(unix.IFLA_IFNAME, nl.ZeroTerminated(name)))
	}
	req.AddData(nl.NewRtAttr(unix.IFLA_EXT_MASK, nl.Uint32Attr(rtextFilterSkipStats)))
	return req.Serialize()
}

// DelLinkRequest builds an RTM_DELLINK of one link by index. It never sets
// NLM_F_CREATE or NLM_F_EXCL: on RTM_DELLINK the EXCL bit means NLM_F_BULK,
// which the kernel refuses.
func DelLinkRequest(index int32) []byte {
	req := nl.NewNetlinkRequest(unix.RTM_DELLINK, 0)
	msg := nl.NewIfInfomsg(unix.AF_UNSPEC)
	msg.Index = index
	req.AddData(msg)
	return req.Serialize()
}

// DelGroupRequest builds the RTM_DELLINK that deletes every device of a
// group in one unregister batch (rtnl_group_dellink): ifindex 0, no name,
// IFLA_GROUP.
func DelGroupRequest(group uint32) []byte {
	req := nl.NewNetlinkRequest(unix.RTM_DELLINK, 0)
	req.AddData(nl.NewIfInfomsg(unix.AF_UNSPEC))
	req.AddData(nl.NewRtAttr(unix.IFLA_GROUP, nl.Uint32Attr(group)))
	return req.Serialize()
}

// SetGroupRequest builds an RTM_SETLINK that moves one link into a group.
func SetGroupRequest(index int32, group uint32) []byte {
	req := nl.NewNetlinkRequest(unix.RTM_SETLINK, 0)
	msg := nl.NewIfInfomsg(unix.AF_UNSPEC)
	msg.Index = index
	req.AddData(msg)
	req.AddData(nl.NewRtAttr(unix.IFLA_GROUP, nl.Uint32Attr(group)))
	return req.Serialize()
}

// SetNetnsRequest builds the RTM_NEWLINK that moves one link into the
// namespace of the file descriptor nsfd (ip link set DEV netns NS): the
// kernel's __dev_change_net_namespace, which waits for RCU per device.
func SetNetnsRequest(index int32, nsfd int) []byte {
	req := nl.NewNetlinkRequest(unix.RTM_NEWLINK, 0)
	msg := nl.NewIfInfomsg(unix.AF_UNSPEC)
	msg.Index = index
	req.AddData(msg)
	req.AddData(nl.NewRtAttr(unix.IFLA_NET_NS_FD, nl.Uint32Attr(uint32(nsfd))))
	return req.Serialize()
}

// SetGroupNetnsRequest builds the RTM_NEWLINK that moves every link of a
// group into the namespace of nsfd (ip link set group G netns NS): ifindex
// 0, IFLA_GROUP, no NLM_F_CREATE (rtnl_group_changelink), which the kernel
// applies device by device.
func SetGroupNetnsRequest(group uint32, nsfd int) []byte {
	req := nl.NewNetlinkRequest(unix.RTM_NEWLINK, 0)
	req.AddData(nl.NewIfInfomsg(unix.AF_UNSPEC))
	req.AddData(nl.NewRtAttr(unix.IFLA_GROUP, nl.Uint32Attr(group)))
	req.AddData(nl.NewRtAttr(unix.IFLA_NET_NS_FD, nl.Uint32Attr(uint32(nsfd))))
	return req.Serialize()
}

// ParseLink decodes an RTM_NEWLINK message (header included).
func ParseLink(msg []byte) (Link, error) {
	const hdr = unix.NLMSG_HDRLEN
	if len(msg) < hdr+unix.SizeofIfInfomsg {
		return Link{}, errShort
	}
	info := msg[hdr : hdr+unix.SizeofIfInfomsg]
	l := Link{
		Index: int32(binary.NativeEndian.Uint32(info[4:8])),
		Flags: binary.NativeEndian.Uint32(info[8:12]),
	}
	nlwire.ForEachAttr(msg[hdr+unix.SizeofIfInfomsg:], func(typ uint16, v []byte) {
		switch typ {
		case unix.IFLA_IFNAME:
			l.Name = nlwire.CString(v)
		case unix.IFLA_GROUP:
			if len(v) >= 4 {
				l.Group = binary.NativeEndian.Uint32(v)
			}
		case unix.IFLA_LINK:
			if len(v) >= 4 {
				l.Parent = int32(binary.NativeEndian.Uint32(v))
			}
		case unix.IFLA_LINK_NETNSID:
			if len(v) >= 4 {
				l.ParentNetnsID, l.HasParentNetns = int32(binary.NativeEndian.Uint32(v)), true
			}
		case unix.IFLA_MASTER:
			if len(v) >= 4 {
				l.Master = int32(binary.NativeEndian.Uint32(v))
			}
		case unix.IFLA_LINKINFO:
			var data []byte
			nlwire.ForEachAttr(v, func(typ uint16, v []byte) {
				switch typ {
				case unix.IFLA_INFO_KIND:
					l.Kind = unique.Make(nlwire.CString(v)).Value() // one copy of "ifb" for 100 000 links
				case unix.IFLA_INFO_DATA:
					data = v
				}
			})
			if parse := infoData[l.Kind]; parse != nil && data != nil {
				l.Data = parse(data)
			}
		}
	})
	return l, nil
}
