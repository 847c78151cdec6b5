package perf

import (
	"context"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// awaitFlush waits until the datagrams a UDP socket has written have left
// the host: the socket's queue (SIOCOUTQ, the memory of datagrams still in
// the host's qdisc) is empty. netperf divides by the time its send loop ran,
// so the ~70 KB a socket keeps queued at the end read as +0.6 % on a 1-s test
// at 100 Mbit/s; atmlab includes this final flush, as netperf's TCP_STREAM
// does, and short tests read the wire rate. It gives up after a second.
func awaitFlush(ctx context.Context, sc syscall.Conn) {
	raw, err := sc.SyscallConn()
	if err != nil {
		return
	}
	for limit := time.Now().Add(time.Second); time.Now().Before(limit) && ctx.Err() == nil; time.Sleep(100 * time.Microsecond) {
		queued := 0
		raw.Control(func(fd uintptr) { queued, err = unix.IoctlGetInt(int(fd), unix.SIOCOUTQ) })
		if err != nil || queued == 0 {
			return
		}
	}
}
