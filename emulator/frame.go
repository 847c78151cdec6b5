// Package emulator is atmlab's engine: frames, the channels that carry them
// with exact wire timing, impairments, host NICs and the network that wires
// nodes together. It is pure Go (no syscalls): the same models run under the
// virtual clock in tests and `atmlab sim`, and under the real-time event loop
// of the kernel package with TAP traffic.
//
// Everything here runs on the scheduler's goroutine; nothing locks.
package emulator

import "time"

// Frame is an Ethernet frame as a TAP hands it over: destination address to
// the end of the payload, without preamble and FCS. (The one exception is
// what an ATM capture point hands its Tapper function: there Data is an ERF
// or SunATM record, see Tapper.)
//
// Data is never modified after the frame is created, so a frame flooded to
// several ports shares one buffer (Share); a component that needs different
// bytes makes a new Frame. A frame from a Pool goes back to it when its last
// holder releases it (Release).
type Frame struct {
	Data []byte
	ID   uint64 // unique within a network
	// Born is the model time the frame was ready for the emulator: when it
	// was read, or, if it waited in a TAP behind a full NIC, when the NIC
	// had room again (a slow host's CPU starts on it from then).
	Born time.Duration
	// GSO, if GSO.Segs > 0, makes the frame a super-frame: Data holds the
	// headers once and the whole payload, and the models bill, queue, drop
	// and deliver it as the GSO.Segs wire frames a NIC's TSO would cut it
	// into (CutSegment). It travels as a train of Pieces; a receiver that
	// needs wire frames gets each segment cut at its arrival.
	GSO Super

	pool *Pool // where Release returns it; nil: the garbage collector's
}

// Receiver takes frames that a channel delivers. Receive runs on the
// scheduler goroutine at the model time the frame's last bit arrives; the
// receiver owns the frame from then on.
type Receiver interface {
	Receive(f *Frame)
}

// ReceiverFunc adapts a function to Receiver.
type ReceiverFunc func(f *Frame)

// Receive calls fn(f).
func (fn ReceiverFunc) Receive(f *Frame) { fn(f) }

// Framing says how long a frame occupies a medium.
type Framing interface {
	// WireBytes returns the bytes a frame of n bytes holds the medium for,
	// and how many of those trail the frame's last bit (an inter-frame gap).
	WireBytes(n int) (total, gap int)
}

// IEEE 802.3 specification constants (clause 4 and 3).
const (
	EtherPreamble = 8  // preamble + SFD, bytes
	EtherFCS      = 4  // frame check sequence, bytes
	EtherMinFrame = 64 // destination address to FCS, bytes
	EtherIFG      = 12 // inter-frame gap, 96 bit times
	EtherHeader   = 14 // destination, source, EtherType
	EtherTag      = 4  // an 802.1Q VLAN tag or an MPLS label stack entry after the addresses
	// EtherOverhead is what the wire adds to a frame that needs no padding
	// (FCS, preamble and SFD, gap) and EtherMinWire the least a frame
	// takes: a tc size table bills Ethernet as "overhead 24 mpu 84".
	EtherOverhead = EtherFCS + EtherPreamble + EtherIFG
	EtherMinWire  = EtherPreamble + EtherMinFrame + EtherIFG
)

// EtherFrame returns the octets of a frame of n octets on the wire from its
// destination address to its FCS: padded to the minimum frame.
func EtherFrame(n int) int { return max(n+EtherFCS, EtherMinFrame) }

// EtherWire is Ethernet's wire billing, the one every model, ceiling and
// pacer uses: the octet times a frame of n octets (destination address to
// the end of the payload, any VLAN tags or MPLS labels included, no FCS)
// holds the wire for, preamble, SFD and inter-frame gap included. A
// 1514-byte frame (a 1500-byte IP packet) takes 1538; the smallest, 84.
func EtherWire(n int) int { return max(n+EtherOverhead, EtherMinWire) }

// Ethernet is 802.3 framing: a frame is padded to 64 bytes with its FCS and
// takes preamble, SFD and the inter-frame gap on the wire (EtherWire).
type Ethernet struct{}

// WireBytes implements Framing.
func (Ethernet) WireBytes(n int) (total, gap int) { return EtherWire(n), EtherIFG }
