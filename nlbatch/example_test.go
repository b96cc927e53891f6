package nlbatch_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/devbulk/devbulk/nlbatch"
	"github.com/vishvananda/netns"
)

// Delete links 10..19 of a namespace made with `ip netns add lab`, many
// requests per sendmsg, and tell each outcome apart.
func ExampleConn_Execute() {
	ns, err := netns.GetFromName("lab")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ns.Close()
	c, err := nlbatch.Dial(ns, nlbatch.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
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
			fmt.Printf("link %d deleted in %v\n", 10+i, r.Latency)
		case errors.Is(r.Err, nlbatch.ErrAckLost):
			fmt.Printf("link %d: outcome unknown, look it up\n", 10+i)
		case errors.As(r.Err, &kerr):
			fmt.Printf("link %d: %v (kernel: %q)\n", 10+i, kerr.Errno, kerr.Message)
		}
	}
	fmt.Println(stats.Sends, "sendmsg calls")
}
