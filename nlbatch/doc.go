// Package nlbatch is a NETLINK_ROUTE socket built for bulk work: it sends many
// pre-serialized requests per sendmsg(2) and gives every request its own result.
//
// The kernel's rtnetlink handler runs inside the sender's sendmsg call
// (netlink_unicast_kernel → rtnetlink_rcv): when sendmsg returns, every request
// of that send has been executed and its ACK is either queued on the socket or
// was dropped because the receive buffer was full. Conn relies on that:
//
//   - it sends a window of requests in one sendmsg, then drains the socket
//     without blocking;
//   - a request whose ACK is not there is reported as ErrAckLost: its outcome
//     is unknown (the kernel did execute it) and the caller must look it up;
//     it is never counted as a success;
//   - the window is sized from the receive buffer (each ACK costs about one
//     skb of truesize, ~830 bytes, however small the message) and halved after
//     an overrun (ENOBUFS), which Stats reports.
//
// Errors carry the kernel's extended-ACK text and attribute offset
// (NETLINK_EXT_ACK), and error ACKs do not echo the request back
// (NETLINK_CAP_ACK). Dumps retry when the kernel flags them inconsistent
// (NLM_F_DUMP_INTR).
//
// A Conn is not safe for concurrent use; open one per goroutine.
package nlbatch
