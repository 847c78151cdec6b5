// Package vsctp is SCTP (RFC 4960) in model time: the packets as they go
// on the wire (wire.go: the common header with its CRC32c, and the chunks
// an association needs) and one association between two endpoints whose
// timers and clock are a scheduler's (assoc.go), so a run is exact and
// repeatable. It stands where the kernel's SCTP or pion/sctp stands in
// real time: pion uses the wall clock throughout, which a virtual run
// cannot. It carries one stream of ordered user messages, one DATA chunk
// to a packet; it has no multi-homing, no bundling and no PR-SCTP.
package vsctp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
)

// Specification constants (RFC 4960 §3).
const (
	// ProtocolNumber is SCTP's IP protocol number.
	ProtocolNumber = 132
	// CommonHeaderLen is the common header: ports, verification tag, checksum.
	CommonHeaderLen = 12
	// ChunkHeaderLen is a chunk's type, flags and length.
	ChunkHeaderLen = 4
	// DataHeaderLen is a DATA chunk's header: the chunk header, TSN,
	// stream identifier, stream sequence number and payload protocol.
	DataHeaderLen = 16
)

// Chunk types (RFC 4960 §3.2).
const (
	TypeData             = 0
	TypeInit             = 1
	TypeInitAck          = 2
	TypeSack             = 3
	TypeAbort            = 6
	TypeShutdown         = 7
	TypeShutdownAck      = 8
	TypeCookieEcho       = 10
	TypeCookieAck        = 11
	TypeShutdownComplete = 14
)

// DATA chunk flags (§3.3.1): the first and last fragment of a message.
const (
	FlagEnd       = 0x01
	FlagBeginning = 0x02
)

// paramStateCookie is INIT ACK's State Cookie parameter (§3.3.3.1).
const paramStateCookie = 7

// castagnoli is CRC32c's table (RFC 4960 Appendix B: the reflected
// polynomial 0x1EDC6F41, which hash/crc32 calls Castagnoli).
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Checksum is a packet's CRC32c with its checksum field taken as zero, as
// the header carries it: the CRC's least significant octet first
// (Appendix B), so binary.LittleEndian reads it back.
func Checksum(pkt []byte) uint32 {
	var zero [4]byte
	c := crc32.Update(0, castagnoli, pkt[:8])
	c = crc32.Update(c, castagnoli, zero[:])
	return crc32.Update(c, castagnoli, pkt[12:])
}

// Errors Parse returns.
var (
	ErrShort    = errors.New("sctp: short packet")
	ErrChecksum = errors.New("sctp: bad CRC32c")
	ErrChunk    = errors.New("sctp: bad chunk length")
)

// Chunk is one chunk: its type, flags and value (the octets after the
// chunk header, padding excluded).
type Chunk struct {
	Type, Flags uint8
	Value       []byte
}

// Packet is an SCTP packet: the common header and its chunks.
type Packet struct {
	SrcPort, DstPort uint16
	Tag              uint32 // the verification tag
	Chunks           []Chunk
}

// Parse decodes a packet: the common header, a CRC32c that matches, and
// chunks whose lengths fit, each padded with zeros to 4 octets. Chunk
// values alias b.
func Parse(b []byte) (Packet, error) {
	var p Packet
	if len(b) < CommonHeaderLen {
		return p, ErrShort
	}
	if binary.LittleEndian.Uint32(b[8:]) != Checksum(b) {
		return p, ErrChecksum
	}
	p.SrcPort, p.DstPort = binary.BigEndian.Uint16(b), binary.BigEndian.Uint16(b[2:])
	p.Tag = binary.BigEndian.Uint32(b[4:])
	for rest := b[CommonHeaderLen:]; len(rest) > 0; {
		if len(rest) < ChunkHeaderLen {
			return p, ErrShort
		}
		n := int(binary.BigEndian.Uint16(rest[2:]))
		padded := (n + 3) &^ 3
		if n < ChunkHeaderLen || padded > len(rest) {
			return p, fmt.Errorf("%w: %d octets with %d left", ErrChunk, n, len(rest))
		}
		for _, z := range rest[n:padded] {
			if z != 0 {
				return p, fmt.Errorf("%w: padding not zero", ErrChunk)
			}
		}
		p.Chunks = append(p.Chunks, Chunk{Type: rest[0], Flags: rest[1], Value: rest[ChunkHeaderLen:n]})
		rest = rest[padded:]
	}
	return p, nil
}

// Append appends the packet's octets to b, chunks padded, checksum set.
func (p Packet) Append(b []byte) []byte {
	start := len(b)
	b = binary.BigEndian.AppendUint16(b, p.SrcPort)
	b = binary.BigEndian.AppendUint16(b, p.DstPort)
	b = binary.BigEndian.AppendUint32(b, p.Tag)
	b = append(b, 0, 0, 0, 0)
	for _, c := range p.Chunks {
		b = append(b, c.Type, c.Flags)
		b = binary.BigEndian.AppendUint16(b, uint16(ChunkHeaderLen+len(c.Value)))
		b = append(b, c.Value...)
		for len(b)%4 != start%4 {
			b = append(b, 0)
		}
	}
	binary.LittleEndian.PutUint32(b[start+8:], Checksum(b[start:]))
	return b
}

// Data is a DATA chunk's fields (§3.3.1).
type Data struct {
	TSN      uint32
	Stream   uint16
	SSN      uint16
	PPID     uint32
	Flags    uint8 // FlagBeginning, FlagEnd, FlagImmediate
	UserData []byte
}

// Chunk is the DATA chunk.
func (d Data) Chunk() Chunk {
	v := make([]byte, 12, 12+len(d.UserData))
	binary.BigEndian.PutUint32(v, d.TSN)
	binary.BigEndian.PutUint16(v[4:], d.Stream)
	binary.BigEndian.PutUint16(v[6:], d.SSN)
	binary.BigEndian.PutUint32(v[8:], d.PPID)
	return Chunk{Type: TypeData, Flags: d.Flags, Value: append(v, d.UserData...)}
}

// ParseData decodes a DATA chunk; it must carry at least one octet.
func ParseData(c Chunk) (Data, error) {
	if c.Type != TypeData || len(c.Value) < 13 {
		return Data{}, fmt.Errorf("%w: DATA of %d octets", ErrChunk, len(c.Value))
	}
	v := c.Value
	return Data{TSN: binary.BigEndian.Uint32(v), Stream: binary.BigEndian.Uint16(v[4:]), SSN: binary.BigEndian.Uint16(v[6:]),
		PPID: binary.BigEndian.Uint32(v[8:]), Flags: c.Flags & (FlagBeginning | FlagEnd | FlagImmediate), UserData: v[12:]}, nil
}

// Gap is a SACK's gap ack block: TSNs cum+Start to cum+End arrived.
type Gap struct{ Start, End uint16 }

// Sack is a SACK chunk's fields (§3.3.4).
type Sack struct {
	CumTSN uint32
	Rwnd   uint32 // the advertised receiver window credit, a_rwnd
	Gaps   []Gap
	Dups   []uint32
}

// Chunk is the SACK chunk.
func (s Sack) Chunk() Chunk {
	v := make([]byte, 0, 12+4*len(s.Gaps)+4*len(s.Dups))
	v = binary.BigEndian.AppendUint32(v, s.CumTSN)
	v = binary.BigEndian.AppendUint32(v, s.Rwnd)
	v = binary.BigEndian.AppendUint16(v, uint16(len(s.Gaps)))
	v = binary.BigEndian.AppendUint16(v, uint16(len(s.Dups)))
	for _, g := range s.Gaps {
		v = binary.BigEndian.AppendUint16(v, g.Start)
		v = binary.BigEndian.AppendUint16(v, g.End)
	}
	for _, d := range s.Dups {
		v = binary.BigEndian.AppendUint32(v, d)
	}
	return Chunk{Type: TypeSack, Value: v}
}

// ParseSack decodes a SACK chunk.
func ParseSack(c Chunk) (Sack, error) {
	v := c.Value
	if c.Type != TypeSack || len(v) < 12 {
		return Sack{}, fmt.Errorf("%w: SACK of %d octets", ErrChunk, len(v))
	}
	s := Sack{CumTSN: binary.BigEndian.Uint32(v), Rwnd: binary.BigEndian.Uint32(v[4:])}
	gaps, dups := int(binary.BigEndian.Uint16(v[8:])), int(binary.BigEndian.Uint16(v[10:]))
	if len(v) != 12+4*gaps+4*dups {
		return Sack{}, fmt.Errorf("%w: SACK of %d octets with %d gaps and %d duplicates", ErrChunk, len(v), gaps, dups)
	}
	for i := range gaps {
		o := 12 + 4*i
		s.Gaps = append(s.Gaps, Gap{binary.BigEndian.Uint16(v[o:]), binary.BigEndian.Uint16(v[o+2:])})
	}
	for i := range dups {
		s.Dups = append(s.Dups, binary.BigEndian.Uint32(v[12+4*gaps+4*i:]))
	}
	return s, nil
}

// Init is an INIT or INIT ACK chunk's fixed fields (§3.3.2, §3.3.3) and,
// in an INIT ACK, its State Cookie.
type Init struct {
	Tag                   uint32 // the initiate tag: the tag the peer puts on what it sends
	Rwnd                  uint32
	OutStreams, InStreams uint16
	TSN                   uint32 // the initial TSN
	Cookie                []byte // INIT ACK only
}

// Chunk is the INIT (ack false) or INIT ACK chunk.
func (in Init) Chunk(ack bool) Chunk {
	v := binary.BigEndian.AppendUint32(nil, in.Tag)
	v = binary.BigEndian.AppendUint32(v, in.Rwnd)
	v = binary.BigEndian.AppendUint16(v, in.OutStreams)
	v = binary.BigEndian.AppendUint16(v, in.InStreams)
	v = binary.BigEndian.AppendUint32(v, in.TSN)
	t := uint8(TypeInit)
	if ack {
		t = TypeInitAck
		v = binary.BigEndian.AppendUint16(v, paramStateCookie)
		v = binary.BigEndian.AppendUint16(v, uint16(4+len(in.Cookie)))
		v = append(v, in.Cookie...)
		for len(v)%4 != 0 {
			v = append(v, 0)
		}
	}
	return Chunk{Type: t, Value: v}
}

// ParseInit decodes an INIT or INIT ACK chunk; parameters other than the
// State Cookie are skipped.
func ParseInit(c Chunk) (Init, error) {
	v := c.Value
	if c.Type != TypeInit && c.Type != TypeInitAck || len(v) < 16 {
		return Init{}, fmt.Errorf("%w: INIT of %d octets", ErrChunk, len(v))
	}
	in := Init{Tag: binary.BigEndian.Uint32(v), Rwnd: binary.BigEndian.Uint32(v[4:]), OutStreams: binary.BigEndian.Uint16(v[8:]),
		InStreams: binary.BigEndian.Uint16(v[10:]), TSN: binary.BigEndian.Uint32(v[12:])}
	for rest := v[16:]; len(rest) >= 4; {
		t, n := binary.BigEndian.Uint16(rest), int(binary.BigEndian.Uint16(rest[2:]))
		if n < 4 || n > len(rest) {
			return Init{}, fmt.Errorf("%w: parameter of %d octets with %d left", ErrChunk, n, len(rest))
		}
		if t == paramStateCookie {
			in.Cookie = rest[4:n]
		}
		rest = rest[min((n+3)&^3, len(rest)):]
	}
	return in, nil
}

// tsnChunk is a chunk whose value is one TSN: SHUTDOWN's cumulative TSN ack.
func tsnChunk(t uint8, tsn uint32) Chunk {
	return Chunk{Type: t, Value: binary.BigEndian.AppendUint32(nil, tsn)}
}
