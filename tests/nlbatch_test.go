package tests

import (
	"context"
	"errors"
	"testing"

	"github.com/devbulk/devbulk/batch"
	"github.com/devbulk/devbulk/devices"
	"github.com/devbulk/devbulk/nlbatch"
)

// A window far larger than the receive buffer makes the real kernel drop
// ACKs. Every such request must come back as "ACK lost" (never success), the
// kernel must in fact have executed it, and batch.Create must settle it by
// lookup.
func TestLostAcksAgainstTheKernel(t *testing.T) {
	k := needKind(t, "ifb")
	s := newScratch(t)
	small, err := nlbatch.Dial(s.ns.NS.Handle, nlbatch.Options{RcvBuf: 64 << 10, Window: 2000})
	if err != nil {
		t.Fatal(err)
	}
	defer small.Close()
	links, err := k.Plan(devices.Options{Count: 2000, Prefix: "ack", Group: 99})
	if err != nil {
		t.Fatal(err)
	}

	reqs := make([][]byte, 1000)
	for i := range reqs {
		reqs[i] = links[i].Message()
	}
	res, st, err := small.Execute(context.Background(), reqs, 0)
	if err != nil {
		t.Fatal(err)
	}
	if st.Overruns == 0 || st.AcksLost == 0 {
		t.Fatalf("no overrun with a 1000-request window on a %d-byte buffer: %+v", small.RcvBuf(), st)
	}
	lost := 0
	for i, r := range res {
		if !errors.Is(r.Err, nlbatch.ErrAckLost) {
			if r.Err != nil {
				t.Errorf("%s: %v", links[i].Name, r.Err)
			}
			continue
		}
		lost++
		if _, err := s.conn.LinkByName(links[i].Name); err != nil {
			t.Errorf("%s: ACK lost but the link does not exist: %v", links[i].Name, err)
		}
	}
	if lost != st.AcksLost {
		t.Errorf("%d results say ACK lost, stats %d", lost, st.AcksLost)
	}

	// The second half through batch.Create, echoed: lost ACKs and lost
	// echoes are settled by lookup, and every link is found as the kernel
	// made it.
	p, found, err := batch.Create(context.Background(), small, links[1000:], batch.RequestOptions{Strategy: batch.CreatePipelined, Echo: true})
	if err != nil {
		t.Fatal(err)
	}
	if p.Failed != 0 {
		t.Errorf("create phase: %d ACKs lost, %d failed, errors %v", p.AcksLost, p.Failed, p.Errors)
	}
	requireFoundAsMade(t, s.conn, links[1000:], found)
}

// A kernel that echoes a new link (NLM_F_ECHO) answers with the link it
// made, under the request's sequence number, before the ACK: Create then
// needs no lookups. Kernels that do not are logged (Create looks up).
func TestCreateEchoGivesTheLinks(t *testing.T) {
	k := needKind(t, "ifb")
	s := newScratch(t)
	links, err := k.Plan(devices.Options{Count: 500, Prefix: "echo", Group: 77})
	if err != nil {
		t.Fatal(err)
	}
	probe := links[0].Message()
	res, _, err := s.conn.ExecuteWith(context.Background(), [][]byte{probe}, nlbatch.ExecOptions{Echo: true})
	if err != nil || res[0].Err != nil {
		t.Fatal(err, res[0].Err)
	}
	t.Logf("this kernel echoes new links: %v", len(res[0].Replies) > 0)
	p, found, err := batch.Create(context.Background(), s.conn, links[1:], batch.RequestOptions{Strategy: batch.CreatePipelined, Echo: true})
	if err != nil || p.Failed != 0 {
		t.Fatal(err, p.Errors)
	}
	requireFoundAsMade(t, s.conn, links[1:], found)
}

// requireFoundAsMade checks that found[i], what Create says it made of
// links[i], is the link the kernel holds under that name now.
func requireFoundAsMade(t *testing.T, c *nlbatch.Conn, links []devices.Link, found []nlbatch.Link) {
	t.Helper()
	for i, l := range found {
		now, err := c.LinkByName(links[i].Name)
		if err != nil || l.Index == 0 || l != now {
			t.Errorf("%s: found %+v, the kernel has %+v (%v)", links[i].Name, l, now, err)
		}
	}
}

// Kernel errors reach the caller with the kernel's extended-ACK text and the
// offset of the attribute it rejected.
func TestKernelErrorCarriesExtAck(t *testing.T) {
	k := needKind(t, "ifb")
	s := newScratch(t)
	long := devices.Link{Kind: k, Name: "namemuchtoolongforlinux"} // bypasses Validate on purpose
	res, _, err := s.conn.Execute(context.Background(), [][]byte{long.Message()}, 0)
	if err != nil {
		t.Fatal(err)
	}
	var e *nlbatch.Error
	if !errors.As(res[0].Err, &e) || e.Message == "" || e.Offset <= 0 {
		t.Fatalf("over-long name: %v; want an error with the kernel's text and the attribute's offset", res[0].Err)
	}
	t.Logf("kernel said: %v", e)
}

// The default window (sized from the receive buffer by an estimate of what
// one ACK costs there) loses no ACK against the real kernel at 20 000
// pipelined creations: the estimate is checked here, not by unit tests
// that share the constant.
func TestDefaultWindowLosesNoAck(t *testing.T) {
	k := needKind(t, "ifb")
	s := newScratch(t)
	links, err := k.Plan(devices.Options{Count: 20000, Prefix: "w", Group: 98})
	if err != nil {
		t.Fatal(err)
	}
	reqs := make([][]byte, len(links))
	for i := range links {
		reqs[i] = links[i].Message()
	}
	res, st, err := s.conn.Execute(context.Background(), reqs, 0)
	if err != nil {
		t.Fatal(err)
	}
	if st.Overruns != 0 || st.AcksLost != 0 || st.Sends >= len(reqs)/10 {
		t.Errorf("default window %d over %d sends: %d overruns, %d ACKs lost", st.FirstWindow, st.Sends, st.Overruns, st.AcksLost)
	}
	for i, r := range res {
		if r.Err != nil {
			t.Fatalf("%s: %v", links[i].Name, r.Err)
		}
	}
}
