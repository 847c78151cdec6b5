package perf

import (
	"net"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The UDP sink times each datagram by its arrival at the socket, not by
// when it read it: two datagrams sent 30 ms apart and read together
// afterwards took 60 ms to arrive (two over one gap), where the reading's
// clock would give nearly 0.
func TestUDPSinkTimesArrivalsByTheKernel(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	stampArrivals(pc)
	time.Sleep(10 * time.Millisecond) // the kernel turns its stamping on a moment after the first socket asks
	c, err := net.Dial("udp", pc.LocalAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	msgs := numbered(2)
	c.Write(msgs[0])
	time.Sleep(30 * time.Millisecond)
	c.Write(msgs[1])
	time.Sleep(10 * time.Millisecond)
	rep := udpSink(pc, time.Now().Add(time.Minute), 0, closedDone())
	if rep.Messages != 2 || rep.Arrival < 60*time.Millisecond || rep.Arrival > time.Second {
		t.Errorf("two datagrams 30 ms apart, read together: %d messages over %v", rep.Messages, rep.Arrival)
	}
}

// A native VC's receiver gets the kernel's time for each SDU's arrival.
func TestNativeReceiveIsStamped(t *testing.T) {
	rx := openOnLoopback(t, 0)
	tx := openOnLoopback(t, 0)
	before := time.Now()
	if err := tx.send(make([]byte, 100)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	_, at, err := rx.recv(time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if at.Before(before.Add(-time.Millisecond)) || at.After(before.Add(10*time.Millisecond)) {
		t.Errorf("an SDU sent at %v, read 20 ms later, is stamped %v", before.Format(time.StampMicro), at.Format(time.StampMicro))
	}
}

// stampIn finds the receive time behind other control messages, and
// reads it in place: the sink calls it for every datagram.
func TestStampInReadsInPlace(t *testing.T) {
	want := time.Unix(1765000000, 123456789)
	oob := unix.UnixRights(7) // a message of another type first
	ts := make([]byte, unix.CmsgSpace(int(unsafe.Sizeof(unix.Timespec{}))))
	h := (*unix.Cmsghdr)(unsafe.Pointer(&ts[0]))
	h.Level, h.Type = unix.SOL_SOCKET, unix.SCM_TIMESTAMPNS
	h.SetLen(unix.CmsgLen(int(unsafe.Sizeof(unix.Timespec{}))))
	*(*unix.Timespec)(unsafe.Pointer(&ts[unix.CmsgLen(0)])) = unix.NsecToTimespec(want.UnixNano())
	oob = append(oob, ts...)
	if got := stampIn(oob); !got.Equal(want) {
		t.Errorf("stampIn = %v, want %v", got, want)
	}
	if got := stampIn(oob[:len(oob)-1]); !got.IsZero() {
		t.Errorf("a truncated timestamp reads %v, want none", got)
	}
	if got := stampIn(nil); !got.IsZero() {
		t.Errorf("no control data reads %v, want none", got)
	}
	if n := testing.AllocsPerRun(100, func() { stampIn(oob) }); n != 0 {
		t.Errorf("stampIn allocates %v times a message, want 0", n)
	}
}
