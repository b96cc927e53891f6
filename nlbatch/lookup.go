package nlbatch

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"

	"github.com/devbulk/devbulk/nlbatch/internal/nlwire"
)

// replyTruesize is what one RTM_GETLINK answer (the link and its ACK) costs
// in the receive buffer, with a margin: lookups are windowed by it, not by
// ackTruesize.
const replyTruesize = 8 << 10

// replyWindow is the default window for requests answered by a link each.
func (c *Conn) replyWindow() int { return max(1, min(c.window, c.rcvbuf/replyTruesize)) }

// LinksByIndex looks up each ifindex with its own RTM_GETLINK, pipelined.
// Unlike a dump, a lookup of one link is answered atomically and is never
// interrupted by concurrent changes, so it is the way to re-check devices
// in a busy namespace. errs[i] wraps unix.ENODEV when indexes[i] is absent,
// and ErrAckLost when the answer was dropped (outcome unknown).
func (c *Conn) LinksByIndex(ctx context.Context, indexes []int32) ([]Link, []error, error) {
	return c.collect(ctx, len(indexes), func(f func(int, Link, error)) error { return c.EachLinkByIndex(ctx, indexes, f) })
}

// LinksByName is LinksByIndex by name.
func (c *Conn) LinksByName(ctx context.Context, names []string) ([]Link, []error, error) {
	return c.collect(ctx, len(names), func(f func(int, Link, error)) error {
		return c.lookup(ctx, len(names), func(i int) []byte { return GetLinkRequest(0, names[i]) }, f)
	})
}

// EachLinkByIndex is LinksByIndex calling f with each answer, in order, as
// it is read: a caller that needs only a verdict per device (gone, still
// there) holds no list of them.
func (c *Conn) EachLinkByIndex(ctx context.Context, indexes []int32, f func(i int, l Link, err error)) error {
	return c.lookup(ctx, len(indexes), func(i int) []byte { return GetLinkRequest(indexes[i], "") }, f)
}

func (c *Conn) collect(ctx context.Context, n int, each func(func(int, Link, error)) error) ([]Link, []error, error) {
	links := make([]Link, n)
	errs := make([]error, n)
	if err := each(func(i int, l Link, err error) { links[i], errs[i] = l, err }); err != nil {
		return nil, nil, err
	}
	return links, errs, nil
}

// lookupChunk is how many lookups are built, sent and parsed at a time:
// the raw answers (a kilobyte or two each) of one chunk are alive at once,
// not those of all n (100 000 lookups held ~200 MiB of answers).
const lookupChunk = 1024

func (c *Conn) lookup(ctx context.Context, n int, req func(i int) []byte, f func(int, Link, error)) error {
	reqs := make([][]byte, 0, min(n, lookupChunk))
	for start := 0; start < n; start += lookupChunk {
		reqs = reqs[:0]
		for i := start; i < min(n, start+lookupChunk); i++ {
			reqs = append(reqs, req(i))
		}
		res, _, err := c.Execute(ctx, reqs, c.replyWindow())
		if err != nil {
			return err
		}
		for j, r := range res {
			l, err := linkOf(r)
			f(start+j, l, err)
		}
	}
	return nil
}

func (c *Conn) getLink(req []byte) (Link, error) {
	res, _, err := c.Execute(context.Background(), [][]byte{req}, 1)
	if err != nil {
		return Link{}, err
	}
	return linkOf(res[0])
}

func linkOf(r Result) (Link, error) {
	if r.Err != nil {
		return Link{}, r.Err
	}
	for _, m := range r.Replies {
		if binary.NativeEndian.Uint16(m[4:6]) == unix.RTM_NEWLINK {
			return ParseLink(m)
		}
	}
	return Link{}, errors.New("RTM_GETLINK: no link in the reply")
}

// ScanLinks lists every link of the namespace for a safety scan (what
// depends on a device, what else a group holds). Where Links fails because
// every attempt was interrupted by concurrent changes, ScanLinks returns
// every distinct version of every link that any attempt saw: each attempt
// reports every device that existed throughout it, so the union errs on the
// side of seeing too much (a link may appear twice, as it was and as it
// became), which makes the scans more careful, never less.
func (c *Conn) ScanLinks() ([]Link, error) {
	seen := map[Link]bool{}
	var union, attempt []Link
	merge := func() {
		for _, l := range attempt {
			if !seen[l] {
				seen[l] = true
				union = append(union, l)
			}
		}
		attempt = attempt[:0]
	}
	err := c.dumpLinks(merge, func(l Link) { attempt = append(attempt, l) })
	if errors.Is(err, ErrDumpInconsistent) {
		merge()
		return union, nil
	}
	return attempt, err
}

// NetnsID returns the id this socket's namespace gives the namespace open
// as fd (RTM_GETNSID), or -1 when it has given it none: then no device here
// can name a device there as its IFLA_LINK.
func (c *Conn) NetnsID(fd int) (int32, error) {
	req := nl.NewNetlinkRequest(unix.RTM_GETNSID, 0)
	req.AddData(nl.NewRtGenMsg())
	req.AddData(nl.NewRtAttr(unix.NETNSA_FD, nl.Uint32Attr(uint32(fd))))
	res, _, err := c.Execute(context.Background(), [][]byte{req.Serialize()}, 1)
	if err != nil {
		return 0, err
	}
	if res[0].Err != nil {
		return 0, fmt.Errorf("RTM_GETNSID: %w", res[0].Err)
	}
	for _, m := range res[0].Replies {
		if len(m) < unix.NLMSG_HDRLEN+4 || binary.NativeEndian.Uint16(m[4:6]) != unix.RTM_NEWNSID {
			continue
		}
		id := int32(-1)
		nlwire.ForEachAttr(m[unix.NLMSG_HDRLEN+4:], func(typ uint16, v []byte) {
			if typ == unix.NETNSA_NSID && len(v) >= 4 {
				id = int32(binary.NativeEndian.Uint32(v))
			}
		})
		return id, nil
	}
	return 0, errors.New("RTM_GETNSID: no answer")
}

// Do sends one request and returns the kernel's answer: nil for success,
// *Error with the extended-ACK text, or ErrAckLost.
func (c *Conn) Do(ctx context.Context, req []byte) error {
	res, _, err := c.Execute(ctx, [][]byte{req}, 1)
	if err != nil {
		return err
	}
	return res[0].Err
}
