package nlbatch

import (
	"errors"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/devbulk/devbulk/nlbatch/nlbatchtest"
)

func linkMessage(seq uint32, flags uint16, index int32, name string, group uint32) []byte {
	return nlbatchtest.LinkMessage(seq, flags, nlbatchtest.Link{Index: index, Name: name, Kind: "ifb", Group: group})
}

// The first attempt is flagged inconsistent; Dump must start over and keep
// only the second attempt's links.
func TestDumpRetriesWhenInterrupted(t *testing.T) {
	attempt := 0
	f := &nlbatchtest.Kernel{Capacity: 100}
	f.Answer = func(seq uint32, _ []byte) (unix.Errno, string, [][]byte) {
		attempt++
		var flags uint16 = unix.NLM_F_MULTI
		if attempt == 1 {
			flags |= unix.NLM_F_DUMP_INTR
		}
		return 0, "", [][]byte{
			linkMessage(seq, flags, 1, "lo", 0),
			linkMessage(seq, flags, int32(attempt+10), "dbk0", 7),
			nlbatchtest.Message(unix.NLMSG_DONE, flags, seq, make([]byte, 4)),
		}
	}
	c := NewConn(f, 1<<20, 1<<20)
	links, err := c.Links()
	if err != nil {
		t.Fatal(err)
	}
	if attempt != 2 || len(links) != 2 {
		t.Fatalf("attempts %d, links %+v", attempt, links)
	}
	want := Link{Index: 12, Name: "dbk0", Kind: "ifb", Group: 7}
	if links[1] != want {
		t.Errorf("got %+v, want %+v", links[1], want)
	}
}

func TestDumpGivesUpWhenAlwaysInterrupted(t *testing.T) {
	f := &nlbatchtest.Kernel{Capacity: 100}
	f.Answer = func(seq uint32, _ []byte) (unix.Errno, string, [][]byte) {
		return 0, "", [][]byte{nlbatchtest.Message(unix.NLMSG_DONE, unix.NLM_F_MULTI|unix.NLM_F_DUMP_INTR, seq, make([]byte, 4))}
	}
	c := NewConn(f, 1<<20, 1<<20)
	if _, err := c.Links(); err != ErrDumpInconsistent {
		t.Errorf("err %v, want ErrDumpInconsistent", err)
	}
}

// An error in the middle of a dump is returned only after the dump is read
// to its end, so the next request on the Conn gets its own answer.
func TestDumpErrorLeavesSocketClean(t *testing.T) {
	f := &nlbatchtest.Kernel{Capacity: 100}
	f.Answer = func(seq uint32, _ []byte) (unix.Errno, string, [][]byte) {
		return 0, "", [][]byte{
			linkMessage(seq, unix.NLM_F_MULTI, 1, "lo", 0),
			linkMessage(seq, unix.NLM_F_MULTI, 2, "x", 0),
			nlbatchtest.Message(unix.NLMSG_DONE, unix.NLM_F_MULTI, seq, make([]byte, 4)),
		}
	}
	c := NewConn(f, 1<<20, 1<<20)
	boom := errors.New("boom")
	err := c.Dump(GetLinkRequest(0, ""), func() {}, func([]byte) error { return boom })
	if !errors.Is(err, boom) {
		t.Fatalf("err %v, want boom", err)
	}
	if f.Queued() != 0 {
		t.Errorf("%d messages of the dump left on the socket", f.Queued())
	}
}
