package perf

import (
	"net"
	"testing"
	"time"
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
