//go:build unix

package remote

import (
	"errors"
	"io"
	"net"
	"syscall"
	"time"
)

// SpinFor is how long a read polls its socket before it sleeps in the
// poller: the far part's window is usually that close, and waking a
// sleeping thread took 50-100 µs on the machines measured, more than a
// window's work. split-halves.yaml as processes took 3.8-4.4 s polling
// 2 ms, 6.9 s polling 100 µs and 9.1 s not polling (load 4.4-5.9; giving
// the processor away between polls, sched_yield, took 6.6 s).
var SpinFor = 2 * time.Millisecond

// spinReader reads a connection (TCP or Unix), polling it for SpinFor before it
// waits as any read does (with the connection's deadline).
type spinReader struct {
	raw syscall.RawConn
}

func newReader(c net.Conn) io.Reader {
	if sc, ok := c.(syscall.Conn); ok {
		if raw, err := sc.SyscallConn(); err == nil {
			return &spinReader{raw: raw}
		}
	}
	return c
}

func (r *spinReader) Read(p []byte) (int, error) {
	var n int
	var rerr error
	var until time.Time
	err := r.raw.Read(func(fd uintptr) bool {
		for i := 0; ; i++ {
			n, rerr = syscall.Read(int(fd), p)
			if !errors.Is(rerr, syscall.EAGAIN) {
				return true
			}
			if i%64 == 0 {
				now := time.Now()
				if until.IsZero() {
					until = now.Add(SpinFor)
				} else if now.After(until) {
					return false // sleep in the poller until readable
				}
			}
		}
	})
	if err != nil {
		return 0, err
	}
	if rerr != nil {
		return 0, rerr
	}
	if n == 0 && len(p) > 0 {
		return 0, io.EOF
	}
	return n, nil
}
