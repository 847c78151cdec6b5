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
// receiveStamps), or the zero time when it has none. It reads the
// messages in place (ParseOneSocketControlMessage): the sink calls it
// for every datagram, and a parse that allocated made garbage at the
// receiver's message rate.
func stampIn(oob []byte) time.Time {
	for len(oob) > 0 {
		h, data, rest, err := unix.ParseOneSocketControlMessage(oob)
		if err != nil {
			return time.Time{}
		}
		if h.Level == unix.SOL_SOCKET && h.Type == unix.SCM_TIMESTAMPNS && len(data) >= int(unsafe.Sizeof(unix.Timespec{})) {
			ts := *(*unix.Timespec)(unsafe.Pointer(&data[0]))
			return time.Unix(ts.Unix())
		}
		oob = rest
	}
	return time.Time{}
}
