package bystander

import (
	"context"
	"sync"
	"testing"

	"github.com/devbulk/devbulk/devices"
	"github.com/devbulk/devbulk/namespace"
	"github.com/devbulk/devbulk/nlbatch"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// Against the real kernel, in a throwaway namespace: a dump of 3000 links
// (many receive buffers) while another socket adds and deletes a device
// there is flagged NLM_F_DUMP_INTR, and the dump operation counts it and
// retries until a consistent answer.
func TestDumpCountsInterruptions(t *testing.T) {
	sup, err := devices.Probe(devices.Ifb)
	if err != nil || !devices.Works(sup)["ifb"] {
		t.Skip("needs ifb and CAP_NET_ADMIN")
	}
	e, err := newEnv(ops["dump"], devices.Ifb)
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
	do, _ := ops["dump"].make(e)
	interrupted := 0
	for i := 0; i < 30; i++ {
		n, err := do(ctx)
		if err != nil {
			t.Errorf("dump %d: %v", i, err)
		}
		interrupted += n
	}
	stop()
	wg.Wait()
	if interrupted == 0 {
		t.Error("no dump of 3000 links was interrupted while a device came and went")
	}
	t.Logf("%d dumps interrupted", interrupted)
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
			e, err := newEnv(ops[name], kind)
			if err != nil {
				t.Fatal(err)
			}
			do, err := ops[name].make(e)
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
