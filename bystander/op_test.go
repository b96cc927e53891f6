package bystander

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/devbulk/devbulk/devices"
	"github.com/devbulk/devbulk/namespace"
	"github.com/devbulk/devbulk/nlbatch"
	"github.com/devbulk/devbulk/nlbatch/nlbatchtest"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// Against the real kernel, in a throwaway namespace: dumps of 3000 links
// (many receive buffers) while another socket adds and deletes a device
// there as fast as it can. How many attempts the kernel flags
// NLM_F_DUMP_INTR depends on how fast this machine runs the churn beside
// the dump (loaded, every attempt of a dump can be), so only what holds at
// any speed is asserted: every dump is either whole (no error, fewer than
// nlbatch.MaxDumpAttempts interruptions) or reported inconsistent
// (nlbatch.ErrDumpInconsistent, each of its attempts counted); at least one
// interruption is seen and counted; once the churn stops, a dump is whole
// at once. Budget: 30 dumps, then on until one was interrupted, 60 s in all.
func TestDumpCountsInterruptions(t *testing.T) {
	sup, err := devices.Probe(devices.Ifb)
	if err != nil || !devices.Works(sup)["ifb"] {
		t.Skip("needs ifb and CAP_NET_ADMIN")
	}
	e, err := newEnv(ops.At("dump"), devices.Ifb)
	if err != nil {
		t.Fatal(err)
	}
	defer e.release()
	links, err := devices.Ifb.Plan(devices.Options{Count: 3000, Prefix: "d"})
	if err != nil {
		t.Fatal(err)
	}
	reqs := make([][]byte, len(links))
	for i := range links {
		reqs[i] = links[i].Message()
	}
	if _, _, err := e.conn.Execute(context.Background(), reqs, 0); err != nil {
		t.Fatal(err)
	}
	churn, err := nlbatch.Dial(e.ns, nlbatch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer churn.Close()
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		add, del := links[0], delByName("c0")
		add.Name = "c0"
		for ctx.Err() == nil {
			churn.Do(ctx, add.Message())
			churn.Do(ctx, del)
		}
	})
	do, _ := ops.At("dump").make(e)
	const dumps, budget = 30, 60 * time.Second
	deadline := time.Now().Add(budget)
	var interrupted, whole, inconsistent int
	for i := 0; i < dumps || interrupted == 0 && time.Now().Before(deadline); i++ {
		n, err := do(context.Background())
		switch {
		case err == nil && n < nlbatch.MaxDumpAttempts:
			whole++
		case errors.Is(err, nlbatch.ErrDumpInconsistent) && n == nlbatch.MaxDumpAttempts:
			inconsistent++
		default:
			t.Errorf("dump %d: %d interruptions counted, error %v: want a whole dump (fewer than %d) or every one of %d attempts counted and reported",
				i, n, err, nlbatch.MaxDumpAttempts, nlbatch.MaxDumpAttempts)
		}
		interrupted += n
	}
	stop()
	wg.Wait()
	t.Logf("%d interruptions counted; %d dumps whole, %d interrupted on every attempt", interrupted, whole, inconsistent)
	if interrupted == 0 {
		t.Errorf("no dump of 3000 links was counted interrupted while a device came and went (%d dumps, %s budget)", whole+inconsistent, budget)
	}
	if n, err := do(context.Background()); n != 0 || err != nil {
		t.Errorf("with nothing changing, a dump counted %d interruptions, error %v", n, err)
	}
}

// The dump operation's count without a kernel's timing: a dump the kernel
// flags on its first attempts counts them and is whole; one flagged on
// every attempt counts every one and says so.
func TestDumpOpCountsEveryFlaggedAttempt(t *testing.T) {
	for _, tc := range []struct {
		flagged, want int
		err           error
	}{{0, 0, nil}, {2, 2, nil}, {nlbatch.MaxDumpAttempts, nlbatch.MaxDumpAttempts, nlbatch.ErrDumpInconsistent}} {
		attempt := 0
		k := &nlbatchtest.Kernel{Capacity: 100}
		k.Answer = func(seq uint32, _ []byte) (unix.Errno, string, [][]byte) {
			attempt++
			var flags uint16 = unix.NLM_F_MULTI
			if attempt <= tc.flagged {
				flags |= unix.NLM_F_DUMP_INTR
			}
			return 0, "", [][]byte{nlbatchtest.Message(unix.NLMSG_DONE, flags, seq, make([]byte, 4))}
		}
		do, err := ops.At("dump").make(&env{conn: nlbatch.NewConn(k, 1<<20, 1<<20), ns: netns.None(), peer: netns.None()})
		if err != nil {
			t.Fatal(err)
		}
		if n, err := do(context.Background()); n != tc.want || !errors.Is(err, tc.err) {
			t.Errorf("flagged %d times: counted %d, error %v; want %d, %v", tc.flagged, n, err, tc.want, tc.err)
		}
	}
}

// Every registered operation runs against the real kernel in its
// throwaway namespaces, three times in a row (it leaves nothing behind
// that would make the next fail: EEXIST), and once released nothing holds
// its namespaces.
func TestEveryOperationRuns(t *testing.T) {
	sup, err := devices.Probe(devices.LowerKinds()...)
	kind := devices.LowerKind(devices.Works(sup))
	if err != nil || kind == nil {
		t.Skip("needs ifb and CAP_NET_ADMIN")
	}
	for _, name := range Ops() {
		t.Run(name, func(t *testing.T) {
			e, err := newEnv(ops.At(name), kind)
			if err != nil {
				t.Fatal(err)
			}
			do, err := ops.At(name).make(e)
			if err != nil {
				t.Fatal(err)
			}
			for i := range 3 {
				if _, err := do(context.Background()); err != nil {
					t.Fatalf("run %d: %v", i+1, err)
				}
			}
			links, err := e.conn.Links()
			if err != nil || len(links) != 1 {
				t.Errorf("after the operations the namespace holds %d links (%v), want lo alone", len(links), err)
			}
			held := map[uint64]bool{}
			for _, h := range []netns.NsHandle{e.ns, e.peer} {
				var st unix.Stat_t
				if h.IsOpen() && unix.Fstat(int(h), &st) == nil {
					held[st.Ino] = true
				}
			}
			e.release()
			for ino := range namespace.Discover() {
				if held[ino] {
					t.Errorf("netns %d still held after the release", ino)
				}
			}
		})
	}
}
