package nlbatch

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/devbulk/devbulk/nlbatch/nlbatchtest"
)

// withLinks is a fake kernel with a queue of capacity replies and the
// 2000 links that requests deletes.
func withLinks(capacity int) *nlbatchtest.Kernel {
	k := &nlbatchtest.Kernel{Capacity: capacity}
	for i := range 2000 {
		k.Add(nlbatchtest.Link{Name: fmt.Sprintf("x%d", i), Kind: "ifb"})
	}
	return k
}

func requests(n int) [][]byte {
	reqs := make([][]byte, n)
	for i := range reqs {
		reqs[i] = DelLinkRequest(int32(i + 1))
	}
	return reqs
}

func TestExecuteAcksEveryRequest(t *testing.T) {
	f := withLinks(1 << 20)
	c := NewConn(f, 256<<10, 1<<20) // 256 KiB: 256 ACKs at 1 KiB each
	res, st, err := c.Execute(context.Background(), requests(1000), 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		if r.Err != nil || !r.Sent {
			t.Fatalf("request %d: err %v sent %v", i, r.Err, r.Sent)
		}
	}
	if want := (1000 + 255) / 256; st.Sends != want || f.Sends != want {
		t.Errorf("sends: stats %d, kernel saw %d, want %d (window 256)", st.Sends, f.Sends, want)
	}
	if st.AcksLost != 0 || st.Overruns != 0 {
		t.Errorf("unexpected losses: %+v", st)
	}
}

func TestExecuteWindowOneIsSerial(t *testing.T) {
	f := withLinks(1 << 20)
	c := NewConn(f, 1<<20, 1<<20)
	_, st, err := c.Execute(context.Background(), requests(10), 1)
	if err != nil {
		t.Fatal(err)
	}
	if f.Sends != 10 || st.Sends != 10 {
		t.Errorf("window 1 made %d sends, want 10", f.Sends)
	}
}

func TestExecuteErrorsCarryExtAck(t *testing.T) {
	f := &nlbatchtest.Kernel{Capacity: 1 << 20, Answer: func(seq uint32, _ []byte) (unix.Errno, string, [][]byte) {
		if seq%3 == 0 {
			return unix.EEXIST, "Interface name already exists", nil
		}
		return 0, "", nil
	}}
	c := NewConn(f, 1<<20, 1<<20)
	res, _, err := c.Execute(context.Background(), requests(9), 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		if (i+1)%3 != 0 {
			if r.Err != nil {
				t.Errorf("request %d: %v", i, r.Err)
			}
			continue
		}
		var e *Error
		if !errors.As(r.Err, &e) || !errors.Is(r.Err, unix.EEXIST) {
			t.Fatalf("request %d: err %v, want *Error wrapping EEXIST", i, r.Err)
		}
		if e.Message != "Interface name already exists" || e.Offset != 16 {
			t.Errorf("request %d: message %q offset %d", i, e.Message, e.Offset)
		}
	}
}

// A window larger than the receive queue loses ACKs: those requests must be
// "ACK lost", never success, and the window must shrink.
func TestExecuteOverrunLosesAcksAndShrinksWindow(t *testing.T) {
	f := withLinks(100)
	c := NewConn(f, 400<<10, 1<<20)
	if c.Window() != 400 {
		t.Fatalf("window %d, want 400 from the receive buffer", c.Window())
	}
	res, st, err := c.Execute(context.Background(), requests(1000), 0)
	if err != nil {
		t.Fatal(err)
	}
	lost := 0
	for i, r := range res {
		switch {
		case errors.Is(r.Err, ErrAckLost):
			lost++
			if i%400 < 100 && i < 400 {
				t.Errorf("request %d lost its ACK but was within the queue's room", i)
			}
		case r.Err != nil:
			t.Errorf("request %d: %v", i, r.Err)
		}
	}
	if lost != st.AcksLost || lost == 0 {
		t.Errorf("lost %d, stats say %d", lost, st.AcksLost)
	}
	if st.Overruns == 0 || st.LastWindow >= st.FirstWindow || c.Window() != st.LastWindow {
		t.Errorf("window did not shrink: %+v, conn window %d", st, c.Window())
	}
	if st.LastWindow > 100 {
		t.Errorf("window %d still larger than the queue (100)", st.LastWindow)
	}
}

func TestExecuteCancelledSendsNothing(t *testing.T) {
	f := withLinks(1 << 20)
	c := NewConn(f, 1<<20, 1<<20)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, _, err := c.Execute(ctx, requests(5), 0)
	if err != nil {
		t.Fatal(err)
	}
	if f.Sends != 0 {
		t.Errorf("%d sends after cancellation", f.Sends)
	}
	for i, r := range res {
		if r.Sent || !errors.Is(r.Err, context.Canceled) {
			t.Errorf("request %d: sent %v err %v", i, r.Sent, r.Err)
		}
	}
}

func TestExecuteRespectsSendBuffer(t *testing.T) {
	f := withLinks(1 << 20)
	reqs := requests(100)
	c := NewConn(f, 1<<20, 10*len(reqs[0])+64)
	if _, st, err := c.Execute(context.Background(), reqs, 0); err != nil || st.Sends != 10 {
		t.Errorf("sends %d err %v, want 10 datagrams of 10 requests", st.Sends, err)
	}
}

func TestExecuteCollectsReplies(t *testing.T) {
	f := &nlbatchtest.Kernel{Capacity: 1 << 20, Answer: func(seq uint32, _ []byte) (unix.Errno, string, [][]byte) {
		return 0, "", [][]byte{nlbatchtest.Message(unix.RTM_NEWLINK, 0, seq, make([]byte, unix.SizeofIfInfomsg))}
	}}
	c := NewConn(f, 1<<20, 1<<20)
	res, _, err := c.Execute(context.Background(), requests(3), 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		if len(r.Replies) != 1 || r.Err != nil {
			t.Errorf("request %d: %d replies, err %v", i, len(r.Replies), r.Err)
		}
	}
}

func TestExecuteRejectsMalformedRequest(t *testing.T) {
	c := NewConn(withLinks(10), 1<<20, 1<<20)
	if _, _, err := c.Execute(context.Background(), [][]byte{{1, 2, 3}}, 0); err == nil {
		t.Error("a 3-byte request was accepted")
	}
}

func TestExecuteRefusesDumps(t *testing.T) {
	c := NewConn(withLinks(10), 1<<20, 1<<20)
	req := GetLinkRequest(0, "")
	req[7] |= byte(unix.NLM_F_DUMP >> 8)
	res, _, err := c.Execute(context.Background(), [][]byte{req}, 0)
	if err == nil || res[0].Sent || res[0].Err == nil {
		t.Errorf("a dump went through Execute: err %v, result %+v", err, res[0])
	}
}

// A broken socket mid-drain must not leave requests looking successful.
func TestExecuteDrainErrorFailsPending(t *testing.T) {
	f := &brokenRecv{*withLinks(100)}
	c := NewConn(f, 1<<20, 1<<20)
	res, _, err := c.Execute(context.Background(), requests(3), 0)
	if err == nil {
		t.Fatal("no error from a failing recvmsg")
	}
	for i, r := range res {
		if r.Err == nil {
			t.Errorf("request %d reported success without an ACK", i)
		}
	}
}

type brokenRecv struct{ nlbatchtest.Kernel }

func (b *brokenRecv) Recv([]byte, bool) (int, error) { return 0, unix.EBADF }

func TestExecuteReportsProgressPerDatagram(t *testing.T) {
	f := withLinks(1 << 20)
	c := NewConn(f, 1<<20, 1<<20)
	var seen []int
	progress := func(n int) { seen = append(seen, n) }
	if _, _, err := c.ExecuteWith(context.Background(), requests(5), ExecOptions{Window: 2, Progress: progress}); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(seen) != "[2 4 5]" {
		t.Errorf("progress %v, want [2 4 5]: once per datagram, requests answered so far", seen)
	}
}

// A lookup of one device on a Conn with the default buffers (16 MiB
// effective: a window of 2048 replies) allocates for the one request, not
// for the window: a one-by-one delete looks each device up this way, and
// bookkeeping sized for 2048 made 100 000 devices' parallel delete spend
// 7.4% of its time in devbulk's own CPU, mostly its collector.
func TestOneLookupAllocatesForOne(t *testing.T) {
	f := withLinks(1 << 20)
	c := NewConn(f, 16<<20, 8<<20)
	lookup := func() {
		if _, errs, err := c.LinksByIndex(context.Background(), []int32{1}); err != nil || errs[0] != nil {
			t.Fatal(err, errs)
		}
	}
	lookup() // the Conn's buffers are its own from here on
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 100 {
		lookup()
	}
	runtime.ReadMemStats(&after)
	// The answer's copy is ~1 KiB; 8 KiB leaves room for the Result and
	// the request, and none for a table of 2048 entries (~40 KiB).
	if per := (after.TotalAlloc - before.TotalAlloc) / 100; per > 8<<10 {
		t.Errorf("one lookup allocates %d bytes, want at most 8 KiB", per)
	}
}
