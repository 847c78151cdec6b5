package control

import (
	"fmt"
	"net"

	"golang.org/x/sys/unix"
)

// peerUID returns the user id of the process at the other end of a Unix
// socket connection, as the kernel recorded it at connect (SO_PEERCRED).
func peerUID(c net.Conn) (uint32, error) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return 0, fmt.Errorf("not a unix socket connection")
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return 0, err
	}
	var cred *unix.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil {
		return 0, err
	}
	if cerr != nil {
		return 0, fmt.Errorf("SO_PEERCRED: %w", cerr)
	}
	return cred.Uid, nil
}
