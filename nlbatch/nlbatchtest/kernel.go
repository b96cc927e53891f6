// Package nlbatchtest is a fake NETLINK_ROUTE kernel for unit tests of code
// built on nlbatch, where the real kernel cannot be made to misbehave on
// demand: a receive queue of limited size that drops replies and reports
// ENOBUFS once when full (as netlink does), ACKs that are lost after their
// request was executed, and a small link table that answers RTM_NEWLINK,
// RTM_DELLINK (by ifindex, and by group), RTM_SETLINK (group), RTM_GETLINK
// (one link, or a dump) and RTM_GETNSID.
//
// A Kernel is an nlbatch.Transport: nlbatch.NewConn(k, rcvbuf, sndbuf)
// gives a Conn that talks to it. Socket gives further sockets to the same
// table, each with its own receive queue, safe to use from several
// goroutines (parallel workers). As mdlayher/netlink's nltest, it runs in
// the calling goroutine: Send executes the whole datagram before it returns.
package nlbatchtest

import (
	"encoding/binary"
	"errors"
	"slices"
	"sync"

	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"

	"github.com/devbulk/devbulk/nlbatch/internal/nlwire"
)

// Link is one device in the fake kernel's table.
type Link struct {
	Index  int32
	Name   string
	Kind   string
	Group  uint32
	Parent int32 // IFLA_LINK; deleting the parent deletes the link
	// LinkNetnsID, with LinkNetns, is IFLA_LINK_NETNSID: Parent is an
	// ifindex in the namespace of that id (a macvlan made with `link X
	// netns B`), and deleting a local link of that ifindex leaves it.
	LinkNetnsID int32
	LinkNetns   bool
}

// Kernel is a fake kernel. The zero value has an unbounded receive queue
// and an empty link table; ifindexes start at 1.
type Kernel struct {
	// Capacity is how many replies the receive queue holds (0: no limit).
	Capacity int
	// Answer, when set, answers every request instead of the link table:
	// an errno (0: success), the extended-ACK text, and replies to queue
	// before the ACK.
	Answer func(seq uint32, req []byte) (errno unix.Errno, text string, replies [][]byte)
	// LoseAck, when set, is asked about each request the link table
	// executed: true drops its replies and ACK (an overrun: the next Recv
	// reports ENOBUFS), as a full receive buffer does.
	LoseAck func(typ uint16, seq uint32) bool
	// LoseOnlyAck makes LoseAck drop the ACK alone: the replies before it
	// (an echoed link) still arrive, as when the receive buffer overran
	// between the two.
	LoseOnlyAck bool
	// After, when set, is called after each request the link table
	// executed, with its type and flags (NLM_F_DUMP tells a dump): a test
	// changes the table there as another process would between two
	// requests.
	After func(typ, flags uint16)
	// Refuse, when set, makes the link table refuse an RTM_DELLINK of an
	// ifindex with the errno it returns (0: go ahead); a group delete is
	// refused whole when any member is, as the kernel does. It runs with
	// the table locked: it must not change it.
	Refuse func(index int32) unix.Errno
	// Echo makes the link table answer an RTM_NEWLINK that carries
	// NLM_F_ECHO with the new link, before the ACK, as kernels that echo
	// new links do (6.18; not 6.1).
	Echo bool
	// InterruptDumps flags every dump NLM_F_DUMP_INTR, as a kernel does
	// whose table keeps changing under each dump.
	InterruptDumps bool
	// NSIDs answers RTM_GETNSID: the id this namespace gives the
	// namespace of an fd (NETNSA_FD); -1 (none) for the others.
	NSIDs map[uint32]int32
	// Sends counts the datagrams sent.
	Sends int

	mu    sync.Mutex // the table and Sends, for sockets used concurrently
	links []Link
	next  int32
	own   Socket // the Kernel's own queue (Send and Recv on the Kernel)
}

// Socket is one more socket to the kernel's table, with a receive queue
// of its own (of the kernel's Capacity): an nlbatch.Transport.
type Socket struct {
	k       *Kernel
	mu      sync.Mutex
	queue   [][]byte
	overrun bool
}

// Socket opens another socket to the table.
func (k *Kernel) Socket() *Socket { return &Socket{k: k} }

// ErrWouldBlock is what a blocking Recv on an empty queue returns: the real
// socket would wait forever, which a test must never do.
var ErrWouldBlock = errors.New("nlbatchtest: blocking read on an empty queue")

// Add puts a link in the table (Index 0: the next free one) and returns it.
func (k *Kernel) Add(l Link) Link {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.add(l)
}

func (k *Kernel) add(l Link) Link {
	if l.Index == 0 {
		k.next++
		l.Index = k.next
	}
	k.next = max(k.next, l.Index)
	k.links = append(k.links, l)
	return l
}

// Remove deletes a link (and the links on it) from the table.
func (k *Kernel) Remove(index int32) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.delete(index)
}

// Links returns the table, in ifindex order of creation.
func (k *Kernel) Links() []Link {
	k.mu.Lock()
	defer k.mu.Unlock()
	return slices.Clone(k.links)
}

// Send executes every request in datagram b and queues the answers on the
// Kernel's own socket.
func (k *Kernel) Send(b []byte) error { return k.own.send(k, b) }

// Recv reads the Kernel's own socket (see Socket.Recv).
func (k *Kernel) Recv(b []byte, block bool) (int, error) { return k.own.Recv(b, block) }

// Queued is the number of replies waiting on the Kernel's own socket.
func (k *Kernel) Queued() int { return k.own.Queued() }

// Send executes every request in datagram b and queues the answers.
func (s *Socket) Send(b []byte) error { return s.send(s.k, b) }

func (s *Socket) send(k *Kernel, b []byte) error {
	k.mu.Lock()
	s.k = k // the Kernel's own socket learns it here: the zero Kernel is usable
	k.Sends++
	k.mu.Unlock()
	for len(b) >= unix.NLMSG_HDRLEN {
		n := int(binary.NativeEndian.Uint32(b[0:4]))
		if n < unix.NLMSG_HDRLEN || n > len(b) {
			return unix.EINVAL
		}
		k.handle(s, b[:n])
		b = b[min(len(b), nlwire.Align4(n)):]
	}
	return nil
}

func (k *Kernel) handle(s *Socket, req []byte) {
	typ := binary.NativeEndian.Uint16(req[4:6])
	flags := binary.NativeEndian.Uint16(req[6:8])
	seq := binary.NativeEndian.Uint32(req[8:12])
	var errno unix.Errno
	var text string
	var replies [][]byte
	if k.Answer != nil {
		errno, text, replies = k.Answer(seq, req)
	} else {
		k.mu.Lock()
		errno, replies = k.execute(typ, flags, seq, req)
		k.mu.Unlock()
		// The hooks run unlocked: After changes the table as another
		// process would.
		if k.After != nil {
			k.After(typ, flags)
		}
		if k.LoseAck != nil && k.LoseAck(typ, seq) {
			if k.LoseOnlyAck {
				for _, r := range replies {
					s.push(r)
				}
			}
			s.mu.Lock()
			s.overrun = true
			s.mu.Unlock()
			return
		}
	}
	for _, r := range replies {
		s.push(r)
	}
	if flags&unix.NLM_F_ACK != 0 || errno != 0 {
		s.push(Ack(seq, req, errno, text, unix.NLMSG_HDRLEN))
	}
}

func (s *Socket) push(m []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.k.Capacity > 0 && len(s.queue) >= s.k.Capacity {
		s.overrun = true
		return
	}
	s.queue = append(s.queue, m)
}

// Recv returns the next queued reply; an overrun is reported once first,
// as ENOBUFS.
func (s *Socket) Recv(b []byte, block bool) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.overrun {
		s.overrun = false
		return 0, unix.ENOBUFS
	}
	if len(s.queue) == 0 {
		if block {
			return 0, ErrWouldBlock
		}
		return 0, unix.EAGAIN
	}
	m := s.queue[0]
	s.queue = s.queue[1:]
	return copy(b, m), nil
}

// Queued is the number of replies waiting to be read.
func (s *Socket) Queued() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

// Close does nothing.
func (s *Socket) Close() error { return nil }

// Close does nothing.
func (k *Kernel) Close() error { return nil }

// request is the part of an RTM_*LINK request the table looks at.
type request struct {
	index  int32
	name   string
	kind   string
	group  uint32
	hasGrp bool
	parent int32
	nsFD   uint32 // RTM_GETNSID's NETNSA_FD
}

func parse(req []byte) request {
	var r request
	if typ := binary.NativeEndian.Uint16(req[4:6]); typ == unix.RTM_GETNSID && len(req) >= unix.NLMSG_HDRLEN+4 {
		// An rtgenmsg padded to 4 bytes, then the NETNSA attributes.
		nlwire.ForEachAttr(req[unix.NLMSG_HDRLEN+4:], func(typ uint16, v []byte) {
			if typ == unix.NETNSA_FD && len(v) >= 4 {
				r.nsFD = binary.NativeEndian.Uint32(v)
			}
		})
		return r
	}
	const body = unix.NLMSG_HDRLEN + unix.SizeofIfInfomsg
	if len(req) < body {
		return r
	}
	r.index = int32(binary.NativeEndian.Uint32(req[unix.NLMSG_HDRLEN+4:]))
	nlwire.ForEachAttr(req[body:], func(typ uint16, v []byte) {
		switch typ {
		case unix.IFLA_IFNAME:
			r.name = nlwire.CString(v)
		case unix.IFLA_GROUP:
			if len(v) >= 4 {
				r.group, r.hasGrp = binary.NativeEndian.Uint32(v), true
			}
		case unix.IFLA_LINK:
			if len(v) >= 4 {
				r.parent = int32(binary.NativeEndian.Uint32(v))
			}
		case unix.IFLA_LINKINFO:
			nlwire.ForEachAttr(v, func(typ uint16, v []byte) {
				if typ == unix.IFLA_INFO_KIND {
					r.kind = nlwire.CString(v)
				}
			})
		}
	})
	return r
}

// execute runs one request against the table.
func (k *Kernel) execute(typ, flags uint16, seq uint32, req []byte) (unix.Errno, [][]byte) {
	r := parse(req)
	switch typ {
	case unix.RTM_NEWLINK:
		if r.name == "" {
			return unix.EINVAL, nil
		}
		if k.find(0, r.name) >= 0 {
			return unix.EEXIST, nil
		}
		l := k.add(Link{Name: r.name, Kind: r.kind, Group: r.group, Parent: r.parent})
		if k.Echo && flags&unix.NLM_F_ECHO != 0 {
			return 0, [][]byte{LinkMessage(seq, 0, l)}
		}
		return 0, nil
	case unix.RTM_DELLINK:
		if r.index == 0 && r.name == "" && r.hasGrp {
			return k.deleteGroup(r.group), nil
		}
		i := k.find(r.index, r.name)
		if i < 0 {
			return unix.ENODEV, nil
		}
		if k.Refuse != nil {
			if errno := k.Refuse(k.links[i].Index); errno != 0 {
				return errno, nil
			}
		}
		k.delete(k.links[i].Index)
		return 0, nil
	case unix.RTM_SETLINK:
		i := k.find(r.index, r.name)
		if i < 0 {
			return unix.ENODEV, nil
		}
		if r.hasGrp {
			k.links[i].Group = r.group
		}
		return 0, nil
	case unix.RTM_GETLINK:
		if flags&unix.NLM_F_DUMP == unix.NLM_F_DUMP {
			var out [][]byte
			multi := uint16(unix.NLM_F_MULTI)
			if k.InterruptDumps {
				multi |= unix.NLM_F_DUMP_INTR
			}
			for _, l := range k.links {
				out = append(out, LinkMessage(seq, multi, l))
			}
			return 0, append(out, Message(unix.NLMSG_DONE, multi, seq, make([]byte, 4)))
		}
		i := k.find(r.index, r.name)
		if i < 0 {
			return unix.ENODEV, nil
		}
		return 0, [][]byte{LinkMessage(seq, 0, k.links[i])}
	case unix.RTM_GETNSID:
		nsid, ok := k.NSIDs[r.nsFD]
		if !ok {
			nsid = -1
		}
		id := nl.NewRtAttr(unix.NETNSA_NSID, nl.Uint32Attr(uint32(nsid)))
		return 0, [][]byte{Message(unix.RTM_NEWNSID, 0, seq, append(make([]byte, 4), id.Serialize()...))}
	}
	return unix.EOPNOTSUPP, nil
}

// find returns the position of the link with index (when > 0, as the
// kernel looks up) or else name, or -1.
func (k *Kernel) find(index int32, name string) int {
	return slices.IndexFunc(k.links, func(l Link) bool {
		if index > 0 {
			return l.Index == index
		}
		return name != "" && l.Name == name
	})
}

// delete removes a link and, as the kernel does, the links on it.
func (k *Kernel) delete(index int32) {
	k.links = slices.DeleteFunc(k.links, func(l Link) bool { return l.Index == index })
	var uppers []int32 // not a copy of the table: a delete allocates nothing per link
	for _, l := range k.links {
		if l.Parent == index && !l.LinkNetns {
			uppers = append(uppers, l.Index)
		}
	}
	for _, u := range uppers {
		k.delete(u)
	}
}

func (k *Kernel) deleteGroup(g uint32) unix.Errno {
	if g == 0 {
		return unix.EPERM
	}
	var in []int32
	for _, l := range k.links {
		if l.Group == g {
			in = append(in, l.Index)
		}
	}
	if len(in) == 0 {
		return unix.ENODEV
	}
	for _, ix := range in {
		if k.Refuse != nil {
			if errno := k.Refuse(ix); errno != 0 {
				return errno
			}
		}
	}
	for _, ix := range in {
		k.delete(ix)
	}
	return 0
}

// LinkMessage encodes l as the kernel's RTM_NEWLINK answer to seq.
func LinkMessage(seq uint32, flags uint16, l Link) []byte {
	info := nl.NewIfInfomsg(unix.AF_UNSPEC)
	info.Index = l.Index
	b := info.Serialize()
	b = append(b, nl.NewRtAttr(unix.IFLA_IFNAME, nl.ZeroTerminated(l.Name)).Serialize()...)
	b = append(b, nl.NewRtAttr(unix.IFLA_GROUP, nl.Uint32Attr(l.Group)).Serialize()...)
	if l.Parent != 0 {
		b = append(b, nl.NewRtAttr(unix.IFLA_LINK, nl.Uint32Attr(uint32(l.Parent))).Serialize()...)
	}
	if l.LinkNetns {
		b = append(b, nl.NewRtAttr(unix.IFLA_LINK_NETNSID, nl.Uint32Attr(uint32(l.LinkNetnsID))).Serialize()...)
	}
	if l.Kind != "" {
		li := nl.NewRtAttr(unix.IFLA_LINKINFO, nil)
		li.AddRtAttr(nl.IFLA_INFO_KIND, nl.NonZeroTerminated(l.Kind))
		b = append(b, li.Serialize()...)
	}
	return Message(unix.RTM_NEWLINK, flags, seq, b)
}

// Ack builds what a kernel with NETLINK_CAP_ACK and NETLINK_EXT_ACK answers
// to req: the error code (0: success), the request's header, and, with
// text, the message and the offset of the attribute at fault.
func Ack(seq uint32, req []byte, errno unix.Errno, text string, offset int) []byte {
	payload := make([]byte, 4+unix.NLMSG_HDRLEN)
	binary.NativeEndian.PutUint32(payload, uint32(-int32(errno)))
	copy(payload[4:], req[:unix.NLMSG_HDRLEN])
	flags := uint16(unix.NLM_F_CAPPED)
	if text != "" {
		flags |= unix.NLM_F_ACK_TLVS
		payload = append(payload, nl.NewRtAttr(unix.NLMSGERR_ATTR_MSG, nl.ZeroTerminated(text)).Serialize()...)
		payload = append(payload, nl.NewRtAttr(unix.NLMSGERR_ATTR_OFFS, nl.Uint32Attr(uint32(offset))).Serialize()...)
	}
	return Message(unix.NLMSG_ERROR, flags, seq, payload)
}

// Message builds one netlink message.
func Message(typ, flags uint16, seq uint32, payload []byte) []byte {
	m := make([]byte, unix.NLMSG_HDRLEN, unix.NLMSG_HDRLEN+len(payload))
	binary.NativeEndian.PutUint32(m[0:4], uint32(unix.NLMSG_HDRLEN+len(payload)))
	binary.NativeEndian.PutUint16(m[4:6], typ)
	binary.NativeEndian.PutUint16(m[6:8], flags)
	binary.NativeEndian.PutUint32(m[8:12], seq)
	return append(m, payload...)
}
