package nlbatch_test

import (
	"context"
	"errors"
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/devbulk/devbulk/nlbatch"
	"github.com/devbulk/devbulk/nlbatch/nlbatchtest"
)

// Delete links 10..19, many requests per sendmsg, and tell each outcome
// apart. The example talks to nlbatch's fake kernel, told to misbehave the
// way the real one can: link 15 does not exist, link 13 is refused and the
// ACK for link 17 is dropped (as by a full receive buffer). Against the real
// kernel, the Conn comes from nlbatch.Dial(ns, nlbatch.Options{}), with ns a
// namespace of your own (netns.GetFromName("lab") for `ip netns add lab`).
func ExampleConn_Execute() {
	kernel := &nlbatchtest.Kernel{
		Refuse: func(index int32) unix.Errno {
			if index == 13 {
				return unix.EBUSY
			}
			return 0
		},
		LoseAck: func(typ uint16, seq uint32) bool { return seq == 8 },
	}
	for index := int32(10); index < 20; index++ {
		if index != 15 {
			kernel.Add(nlbatchtest.Link{Index: index, Name: fmt.Sprint("lab", index), Kind: "ifb"})
		}
	}
	c := nlbatch.NewConn(kernel, 1<<20, 1<<20)
	defer c.Close()

	var reqs [][]byte
	for index := int32(10); index < 20; index++ {
		reqs = append(reqs, nlbatch.DelLinkRequest(index))
	}
	res, stats, err := c.Execute(context.Background(), reqs, 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	for i, r := range res {
		var kerr *nlbatch.Error
		switch {
		case r.Err == nil:
			fmt.Printf("link %d deleted\n", 10+i)
		case errors.Is(r.Err, nlbatch.ErrAckLost):
			fmt.Printf("link %d: outcome unknown, look it up\n", 10+i)
		case errors.As(r.Err, &kerr):
			fmt.Printf("link %d: %v\n", 10+i, kerr.Errno)
		}
	}
	fmt.Printf("%d sendmsg, %d ACK lost\n", stats.Sends, stats.AcksLost)
	// Output:
	// link 10 deleted
	// link 11 deleted
	// link 12 deleted
	// link 13: device or resource busy
	// link 14 deleted
	// link 15: no such device
	// link 16 deleted
	// link 17: outcome unknown, look it up
	// link 18 deleted
	// link 19 deleted
	// 1 sendmsg, 1 ACK lost
}
