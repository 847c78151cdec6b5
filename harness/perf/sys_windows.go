package perf

import (
	"syscall"
	"time"

	"golang.org/x/sys/windows"
)

// sockbufControl sets SO_SNDBUF and SO_RCVBUF (when positive) on a socket
// before it connects or listens.
func sockbufControl(snd, rcv int) func(network, address string, c syscall.RawConn) error {
	return func(_, _ string, c syscall.RawConn) error {
		var serr error
		c.Control(func(fd uintptr) {
			if snd > 0 {
				serr = windows.SetsockoptInt(windows.Handle(fd), windows.SOL_SOCKET, windows.SO_SNDBUF, snd)
			}
			if rcv > 0 && serr == nil {
				serr = windows.SetsockoptInt(windows.Handle(fd), windows.SOL_SOCKET, windows.SO_RCVBUF, rcv)
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
		snd, _ = windows.GetsockoptInt(windows.Handle(fd), windows.SOL_SOCKET, windows.SO_SNDBUF)
		rcv, _ = windows.GetsockoptInt(windows.Handle(fd), windows.SOL_SOCKET, windows.SO_RCVBUF)
	})
	return snd, rcv
}

// processCPU is the process's user and kernel time.
func processCPU() time.Duration {
	var creation, exit, kernel, user windows.Filetime
	if windows.GetProcessTimes(windows.CurrentProcess(), &creation, &exit, &kernel, &user) != nil {
		return 0
	}
	ticks := func(f windows.Filetime) time.Duration { // 100-ns units
		return time.Duration(uint64(f.HighDateTime)<<32|uint64(f.LowDateTime)) * 100
	}
	return ticks(kernel) + ticks(user)
}
