package netstat

import "testing"

// A host kernel's line in atmlab stats names each counter with its value.
func TestCountersLine(t *testing.T) {
	c := Counters{IfaceRxDrops: 1, UDPInDatagrams: 2, UDPInErrors: 3, UDPRcvbufErrors: 3, UDPNoPorts: 4, UDPOutDatagrams: 5, UDPSndbufErrors: 6, TCPOutSegs: 7, TCPRetransSegs: 8, TCPInErrs: 9}
	want := "h1: interfaces dropped 1 frames received; UDP 2 received, 7 not delivered (3 receive buffer full, 4 to no port), 5 sent, 6 refused by a full queue; TCP 7 segments sent, 8 retransmitted, 9 received in error"
	if got := c.Line("h1"); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}
