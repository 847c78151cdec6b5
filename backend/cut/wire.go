package cut

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// The cut's wire format: every datagram between two instances is one of
// three messages, big-endian, after a four-octet head (docs/split.md):
//
//	head   0  2  magic "ac"
//	       2  1  version (1)
//	       3  1  kind: 1 frame, 2 ping, 3 pong
//	frame  4  2  link: its index among the lab file's links, from 0
//	       6  1  direction: 0 A to B, 1 B to A
//	       7  1  zero
//	       8  4  sequence number, per link and direction, from 0
//	      12  8  departure: the sender's model time, in nanoseconds, at
//	             which the frame's last bit left its transmitter
//	      20  -  the Ethernet frame, without preamble and FCS
//	ping   4  4  the lab's tag (Tag)
//	       8  4  sequence number
//	      12  4  the pinged part's id (PartID), which the pong echoes:
//	             the pinger knows its peer by it, whatever address
//	             the pong came from
//	      16  8  t1: the pinger's model time as it sent the ping
//	pong   the ping's 24 octets, kind 3, then
//	      24  8  t2: the answerer's model time as it read the ping
//	      32  8  t3: the answerer's model time as it sent the pong
const (
	magic0, magic1 = 'a', 'c'
	version        = 1

	kindFrame = 1
	kindPing  = 2
	kindPong  = 3

	frameHead = 20
	pingLen   = 24
	pongLen   = 40

	// MaxFrame is the largest Ethernet frame a datagram carries: a
	// jumbo frame of 9000 octets of payload and its header fits.
	MaxFrame = 9216
)

// Frame is a frame crossing a cut.
type Frame struct {
	Link      uint16 // the link's index among the lab file's links
	BToA      bool   // the frame travels from the link's B end to its A end
	Seq       uint32
	Departure time.Duration // the sender's model time of its last bit
	Data      []byte
}

// Ping is a clock exchange: a ping carries T1; its pong adds T2 and T3.
type Ping struct {
	Tag        uint32
	Seq        uint32
	To         uint32 // the pinged part's PartID
	T1, T2, T3 time.Duration
	Pong       bool
}

// AppendFrame appends f's datagram to b.
func AppendFrame(b []byte, f Frame) []byte {
	b = append(b, magic0, magic1, version, kindFrame)
	b = binary.BigEndian.AppendUint16(b, f.Link)
	dir := byte(0)
	if f.BToA {
		dir = 1
	}
	b = append(b, dir, 0)
	b = binary.BigEndian.AppendUint32(b, f.Seq)
	b = binary.BigEndian.AppendUint64(b, uint64(f.Departure))
	return append(b, f.Data...)
}

// AppendPing appends p's datagram to b: a pong if p.Pong, else a ping.
func AppendPing(b []byte, p Ping) []byte {
	kind := byte(kindPing)
	if p.Pong {
		kind = kindPong
	}
	b = append(b, magic0, magic1, version, kind)
	b = binary.BigEndian.AppendUint32(b, p.Tag)
	b = binary.BigEndian.AppendUint32(b, p.Seq)
	b = binary.BigEndian.AppendUint32(b, p.To)
	b = binary.BigEndian.AppendUint64(b, uint64(p.T1))
	if p.Pong {
		b = binary.BigEndian.AppendUint64(b, uint64(p.T2))
		b = binary.BigEndian.AppendUint64(b, uint64(p.T3))
	}
	return b
}

var errNotCut = errors.New("not a cut datagram (magic or version)")

// Decode reads a datagram: a frame (whose Data points into b) or a ping
// or pong. It never panics on any input.
func Decode(b []byte) (f Frame, p Ping, isFrame bool, err error) {
	if len(b) < 4 || b[0] != magic0 || b[1] != magic1 || b[2] != version {
		return f, p, false, errNotCut
	}
	switch b[3] {
	case kindFrame:
		if len(b) < frameHead {
			return f, p, false, fmt.Errorf("frame datagram of %d octets, shorter than its %d-octet head", len(b), frameHead)
		}
		if b[6] > 1 || b[7] != 0 {
			return f, p, false, fmt.Errorf("frame datagram with direction %d, reserved %d", b[6], b[7])
		}
		if n := len(b) - frameHead; n > MaxFrame {
			return f, p, false, fmt.Errorf("frame of %d octets, more than %d", n, MaxFrame)
		}
		f = Frame{
			Link:      binary.BigEndian.Uint16(b[4:]),
			BToA:      b[6] == 1,
			Seq:       binary.BigEndian.Uint32(b[8:]),
			Departure: time.Duration(binary.BigEndian.Uint64(b[12:])),
			Data:      b[frameHead:],
		}
		return f, p, true, nil
	case kindPing, kindPong:
		want := pingLen
		if b[3] == kindPong {
			want = pongLen
		}
		if len(b) != want {
			return f, p, false, fmt.Errorf("clock datagram of %d octets, not %d", len(b), want)
		}
		p = Ping{
			Tag:  binary.BigEndian.Uint32(b[4:]),
			Seq:  binary.BigEndian.Uint32(b[8:]),
			To:   binary.BigEndian.Uint32(b[12:]),
			T1:   time.Duration(binary.BigEndian.Uint64(b[16:])),
			Pong: b[3] == kindPong,
		}
		if p.Pong {
			p.T2 = time.Duration(binary.BigEndian.Uint64(b[24:]))
			p.T3 = time.Duration(binary.BigEndian.Uint64(b[32:]))
		}
		return f, p, false, nil
	}
	return f, p, false, fmt.Errorf("datagram of kind %d, not 1-3", b[3])
}
