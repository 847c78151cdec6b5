//go:build unix

package perf

import (
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// sockbufControl sets SO_SNDBUF and SO_RCVBUF (when positive) on a socket
// before it connects or listens, so the window scale reflects them.
func sockbufControl(snd, rcv int) func(network, address string, c syscall.RawConn) error {
	return func(_, _ string, c syscall.RawConn) error {
		var serr error
		c.Control(func(fd uintptr) {
			if snd > 0 {
				serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_SNDBUF, snd)
			}
			if rcv > 0 && serr == nil {
				serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF, rcv)
			}
		})
		return serr
	}
}

// sockbufs returns the socket buffers a socket actually has.
func sockbufs(sc syscall.Conn) (snd, rcv int) {
	raw, err := sc.SyscallConn()
	if err != nil {
		return 0, 0
	}
	raw.Control(func(fd uintptr) {
		snd, _ = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_SNDBUF)
		rcv, _ = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF)
	})
	return snd, rcv
}

func processCPU() time.Duration {
	var ru unix.Rusage
	unix.Getrusage(unix.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
