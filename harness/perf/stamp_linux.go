package perf

import (
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// stampOOB is the room a message's control data needs for its receive
// time (SCM_TIMESTAMPNS).
var stampOOB = unix.CmsgSpace(int(unsafe.Sizeof(unix.Timespec{})))

// receiveStamps asks the kernel for the time each datagram reached the
// socket (SO_TIMESTAMPNS): when the network delivered it, whenever the
// receiving program got round to reading it.
func receiveStamps(fd int) {
	unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
}

// stampIn is the receive time in a message's control data (see
// receiveStamps), or the zero time when it has none.
func stampIn(oob []byte) time.Time {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return time.Time{}
	}
	for _, m := range msgs {
		if m.Header.Level == unix.SOL_SOCKET && m.Header.Type == unix.SCM_TIMESTAMPNS && len(m.Data) >= int(unsafe.Sizeof(unix.Timespec{})) {
			ts := *(*unix.Timespec)(unsafe.Pointer(&m.Data[0]))
			return time.Unix(ts.Unix())
		}
	}
	return time.Time{}
}
