package perf

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// openOnLoopback opens a native VC on lo, skipping where packet sockets
// are not allowed (they need CAP_NET_RAW).
func openOnLoopback(t *testing.T, bufs int) *nativeConn {
	t.Helper()
	c, err := openNative(NativeVC{Iface: "lo", VPI: 0, VCI: 4242}, bufs)
	if err != nil {
		t.Skip(err)
	}
	t.Cleanup(c.close)
	return c
}

// TestNativeReceiveBufferIsForcedPastRmemMax: -S gives the receiving
// packet socket the buffer asked for, doubled as Linux doubles it, even
// above rmem_max (capped there, 952-octet SDUs at OC-3c's cell rate were
// dropped at the receiver).
func TestNativeReceiveBufferIsForcedPastRmemMax(t *testing.T) {
	b, err := os.ReadFile("/proc/sys/net/core/rmem_max")
	if err != nil {
		t.Skip(err)
	}
	rmemMax, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	want := rmemMax + 1<<20
	c := openOnLoopback(t, want)
	if _, rcv := c.bufs(); rcv != 2*want {
		t.Errorf("asked for %d octets with rmem_max %d: the socket has %d, want %d", want, rmemMax, rcv, 2*want)
	}
}

// TestNativeReceiverCountsItsSocketsDrops: what a receiver's packet
// socket drops for want of buffer is counted (PACKET_STATISTICS), and
// with what it read makes up everything sent; the count restarts at each
// reading.
func TestNativeReceiverCountsItsSocketsDrops(t *testing.T) {
	rx := openOnLoopback(t, 1) // the smallest buffer Linux gives
	tx := openOnLoopback(t, 0)
	rx.drops()
	const sent = 200
	sdu := make([]byte, 952)
	for range sent {
		if err := tx.send(sdu); err != nil {
			t.Fatal(err)
		}
	}
	read := 0
	for {
		if _, _, err := rx.recv(50 * time.Millisecond); err != nil {
			break
		}
		read++
	}
	drops := rx.drops()
	if drops == 0 || read+int(drops) != sent {
		t.Errorf("sent %d: read %d, the socket dropped %d", sent, read, drops)
	}
	if again := rx.drops(); again != 0 {
		t.Errorf("a second reading counted %d drops", again)
	}
}
