//go:build unix

package remote

import (
	"errors"
	"io"
	"net"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// SpinFor is how long a read polls its socket before it sleeps in the
// poller: the far part's account is usually that close, and waking a
// sleeping thread took 50-100 µs on the machines measured, more than a
// window's work. split-halves.yaml as processes took 3.8-4.4 s polling
// 2 ms, 6.9 s polling 100 µs and 9.1 s not polling (load 4.4-5.9; giving
// the processor away between polls, sched_yield, took 6.6 s).
var SpinFor = 2 * time.Millisecond

// sock reads a connection (TCP or Unix), polling it for SpinFor before it
// waits as any read does (with the connection's deadline), or not at all
// (nowait: EAGAIN); and writes it without blocking.
type sock struct {
	raw    syscall.RawConn
	nowait bool
	stash  []byte // read by keep, read again first
	off    int
}

func newSock(c net.Conn) *sock {
	if sc, ok := c.(syscall.Conn); ok {
		if raw, err := sc.SyscallConn(); err == nil {
			return &sock{raw: raw}
		}
	}
	return nil
}

func (r *sock) Read(p []byte) (int, error) {
	if r.off < len(r.stash) {
		n := copy(p, r.stash[r.off:])
		if r.off += n; r.off == len(r.stash) {
			r.stash, r.off = r.stash[:0], 0
		}
		return n, nil
	}
	var n int
	var rerr error
	var until time.Time
	err := r.raw.Read(func(fd uintptr) bool {
		for i := 0; ; i++ {
			n, rerr = syscall.Read(int(fd), p)
			if !errors.Is(rerr, syscall.EAGAIN) || r.nowait {
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

// keep reads what has arrived into the stash, without waiting; an error
// or the end is left for the next Read to find.
func (r *sock) keep() {
	for {
		if cap(r.stash)-len(r.stash) < 16<<10 {
			r.stash = append(r.stash, make([]byte, 64<<10)...)[:len(r.stash)]
		}
		var n int
		var rerr error
		err := r.raw.Read(func(fd uintptr) bool {
			n, rerr = syscall.Read(int(fd), r.stash[len(r.stash):cap(r.stash)])
			return true
		})
		if err != nil || rerr != nil || n <= 0 {
			return
		}
		r.stash = r.stash[:len(r.stash)+n]
	}
}

// write writes b whole, calling full each time the socket's buffer is
// full, until timeout has passed without a write.
func (r *sock) write(b []byte, full func(), timeout time.Duration) error {
	last := time.Now()
	for len(b) > 0 {
		var n int
		var werr error
		err := r.raw.Write(func(fd uintptr) bool {
			n, werr = syscall.Write(int(fd), b)
			return true
		})
		if err != nil {
			return err
		}
		switch {
		case errors.Is(werr, syscall.EAGAIN):
			if timeout > 0 && time.Since(last) > timeout {
				return errors.New("the far end read nothing within the timeout")
			}
			full()
			continue
		case errors.Is(werr, syscall.EINTR):
			continue
		case werr != nil:
			return werr
		}
		b, last = b[n:], time.Now()
	}
	return nil
}

// waitReadable sleeps until one of conns has something to read, or for
// d at most (poll(2) on their descriptors). A connection with no
// descriptor to poll ends the wait at once: its reads are tried again.
func waitReadable(conns []*Conn, d time.Duration) {
	var fds []unix.PollFd
	for _, c := range conns {
		if c == nil {
			continue
		}
		if c.sock == nil {
			return
		}
		c.sock.raw.Control(func(fd uintptr) { fds = append(fds, unix.PollFd{Fd: int32(fd), Events: unix.POLLIN}) })
	}
	ms := int(min(d, time.Second) / time.Millisecond)
	for {
		if _, err := unix.Poll(fds, max(ms, 1)); !errors.Is(err, unix.EINTR) {
			return
		}
	}
}
