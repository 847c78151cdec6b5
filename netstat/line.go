package netstat

import "fmt"

// Line is a host kernel's UDP and TCP counters in words, for atmlab
// stats; name is the host's.
func (c Counters) Line(name string) string {
	return fmt.Sprintf("%s: interfaces dropped %d frames received; UDP %d received, %d not delivered (%d receive buffer full, %d to no port), %d sent, %d refused by a full queue; TCP %d segments sent, %d retransmitted, %d received in error",
		name, c.IfaceRxDrops, c.UDPInDatagrams, c.UDPDropped(), c.UDPRcvbufErrors, c.UDPNoPorts, c.UDPOutDatagrams, c.UDPSndbufErrors, c.TCPOutSegs, c.TCPRetransSegs, c.TCPInErrs)
}
