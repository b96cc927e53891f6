package nlbatch

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// Result is the outcome of one request.
type Result struct {
	// Err is nil when the kernel ACKed success, *Error when it refused,
	// ErrAckLost when the ACK was dropped, or the send error when the request
	// never reached the kernel.
	Err error
	// Sent reports whether the request reached the kernel. Requests left
	// unsent (context cancelled, or a failed send) have Sent false.
	Sent bool
	// Latency is the time from the start of the sendmsg that carried the
	// request to the reading of its ACK.
	Latency time.Duration
	// Replies holds the messages other than the ACK that answered the
	// request (for example the link echoed by NLM_F_ECHO).
	Replies [][]byte
}

// Stats describes how Execute used the socket.
type Stats struct {
	Requests int // requests given
	Sends    int // sendmsg calls
	// FirstWindow and LastWindow are the window at the start and at the end;
	// they differ when overruns shrank it.
	FirstWindow, LastWindow int
	Overruns                int // receive-buffer overruns (ENOBUFS) seen
	AcksLost                int // requests whose ACK was dropped
}

// Execute sends reqs, window requests per sendmsg (0: Conn.Window, which
// fits the receive buffer), and returns one Result per request, in order.
// Window 1 is the classic one-request-then-wait loop.
//
// The window assumes each request is answered by one ACK (and maybe a small
// reply; with ExecOptions.Echo, one echoed object): errors that carry a
// policy dump take more receive buffer; an overrun then loses ACKs, which
// is reported, never hidden. Dump requests are refused: use Dump.
//
// Each request must be one serialized netlink message; Execute writes its
// sequence number and sets NLM_F_REQUEST|NLM_F_ACK in place, so every
// request, successful or not, is answered.
// When ctx is done, Execute stops before the next sendmsg; requests not sent
// are marked unsent with ctx's error. The returned error is only for a broken
// socket; per-request failures are in the results.
func (c *Conn) Execute(ctx context.Context, reqs [][]byte, window int) ([]Result, Stats, error) {
	return c.ExecuteWith(ctx, reqs, ExecOptions{Window: window})
}

// ExecOptions tune one ExecuteWith call.
type ExecOptions struct {
	// Window is the requests per sendmsg (0: Conn.Window), as in Execute.
	Window int
	// Progress, when set, is called after each datagram's replies with the
	// number of requests answered so far: for progress bars over long
	// one-by-one runs.
	Progress func(answered int)
	// Echo sets NLM_F_ECHO on every request: the kernel answers each with
	// what it made (a new link's RTM_NEWLINK, on kernels that echo it)
	// before the ACK. The default window is then sized for those answers.
	Echo bool
	// Reply, when set, is called with each message other than the ACK that
	// answers request i, as it is read, instead of Result.Replies keeping a
	// copy: 100 000 echoed links are ~150 MB. msg is valid only during the
	// call.
	Reply func(i int, msg []byte)
}

// ExecuteWith is Execute with options.
func (c *Conn) ExecuteWith(ctx context.Context, reqs [][]byte, o ExecOptions) ([]Result, Stats, error) {
	window := o.Window
	auto := window <= 0
	flags := uint16(unix.NLM_F_ACK)
	if auto {
		window = c.window
	}
	if o.Echo {
		flags |= unix.NLM_F_ECHO
		if auto {
			window = c.replyWindow()
		}
	}
	st := Stats{Requests: len(reqs), FirstWindow: window}
	res := make([]Result, len(reqs))
	pending := make(map[uint32]int, min(window, len(reqs))) // a lookup of one device on a window of 2048: one entry

	for i := 0; i < len(reqs); {
		if err := ctx.Err(); err != nil {
			markUnsent(res[i:], err)
			break
		}
		out, end, err := c.fill(reqs, i, window, flags, pending)
		if err != nil {
			markUnsent(res[i:], err)
			return res, st, fmt.Errorf("request %d: %w", end, err)
		}
		start := time.Now()
		st.Sends++
		if err := c.send(out); err != nil {
			clear(pending)
			markUnsent(res[i:], fmt.Errorf("sendmsg: %w", err))
			return res, st, fmt.Errorf("sendmsg: %w", err)
		}
		for j := i; j < end; j++ {
			res[j].Sent = true
		}
		overrun, err := c.drain(pending, res, start, o.Reply)
		if err != nil {
			for _, j := range pending {
				res[j].Err = fmt.Errorf("no ACK read: %w", err)
			}
			return res, st, err
		}
		for _, j := range pending {
			res[j].Err = ErrAckLost
			st.AcksLost++
		}
		clear(pending)
		if overrun {
			st.Overruns++
			window = max(1, window/2)
			if auto {
				c.window = window
			}
		}
		i = end
		if o.Progress != nil {
			o.Progress(end)
		}
	}
	st.LastWindow = window
	return res, st, nil
}

// fill makes one datagram of reqs from i on: at most window requests,
// and smaller than the send buffer (the kernel refuses larger ones with
// EMSGSIZE). Each is stamped with its sequence number, noted in pending.
// It returns the datagram (in c.buf) and the index past its last request,
// or the index of the request it could not take and why.
func (c *Conn) fill(reqs [][]byte, i, window int, flags uint16, pending map[uint32]int) ([]byte, int, error) {
	out := c.buf[:0]
	end := i
	for end < len(reqs) && end-i < window {
		if len(out) > 0 && len(out)+len(reqs[end]) > c.sndbuf-64 {
			break
		}
		seq := c.nextSeq()
		if err := stamp(reqs[end], seq, flags); err != nil {
			return nil, end, err
		}
		if isDump(reqs[end]) {
			return nil, end, errDumpInExecute
		}
		pending[seq] = end
		out = append(out, reqs[end]...)
		end++
	}
	c.buf = out[:0]
	return out, end, nil
}

// drain reads every queued reply without blocking and settles the pending
// requests they answer. The kernel has already executed the whole datagram,
// so an empty socket means that whatever is still pending lost its ACK.
func (c *Conn) drain(pending map[uint32]int, res []Result, start time.Time, reply func(int, []byte)) (overrun bool, err error) {
	buf := c.buf[:cap(c.buf)]
	for len(pending) > 0 {
		n, err := c.t.Recv(buf, false)
		switch {
		case errors.Is(err, unix.EAGAIN):
			return overrun, nil
		case errors.Is(err, unix.ENOBUFS):
			overrun = true
			continue
		case err != nil:
			return overrun, fmt.Errorf("recvmsg: %w", err)
		}
		now := time.Since(start)
		err = splitMessages(buf[:n], func(h header, msg []byte) error {
			j, ok := pending[h.Seq]
			if !ok {
				return nil // not ours (a late reply of an earlier request)
			}
			switch {
			case h.Type != unix.NLMSG_ERROR && reply != nil:
				reply(j, msg)
				return nil
			case h.Type != unix.NLMSG_ERROR:
				res[j].Replies = append(res[j].Replies, append([]byte(nil), msg...))
				return nil
			}
			res[j].Err = parseAck(h.Flags, msg[unix.NLMSG_HDRLEN:])
			res[j].Latency = now
			delete(pending, h.Seq)
			return nil
		})
		if err != nil {
			return overrun, fmt.Errorf("recvmsg: %w", err)
		}
	}
	return overrun, nil
}

// errDumpInExecute refuses dump requests: a dump answers with many messages
// over later reads and no ACK, which Execute's accounting does not model.
var errDumpInExecute = errors.New("nlbatch: a dump request (NLM_F_DUMP) goes to Dump, not Execute")

// isDump reports an RTM_GET* request with NLM_F_DUMP (on other types the
// same bits mean NLM_F_REPLACE/NLM_F_EXCL).
func isDump(req []byte) bool {
	typ := binary.NativeEndian.Uint16(req[4:6])
	flags := binary.NativeEndian.Uint16(req[6:8])
	return typ >= unix.RTM_BASE && (typ-unix.RTM_BASE)%4 == 2 && flags&unix.NLM_F_DUMP != 0
}

func markUnsent(res []Result, err error) {
	for i := range res {
		if !res[i].Sent {
			res[i].Err = err
		}
	}
}
