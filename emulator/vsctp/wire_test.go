package vsctp

import (
	"bytes"
	"encoding/hex"
	"errors"
	"hash/crc32"
	"testing"
)

// CRC32c's check value (RFC 3720 B.4's polynomial, RFC 4960 Appendix B):
// "123456789" gives 0xE3069283; 32 zero octets give 0x8A9136AA. IEEE's
// CRC-32 (0xCBF43926) is not SCTP's.
func TestCRC32cKnownAnswers(t *testing.T) {
	if got := crc32.Checksum([]byte("123456789"), castagnoli); got != 0xE3069283 {
		t.Errorf("CRC32c(123456789) = %#x, want 0xe3069283", got)
	}
	if got := crc32.Checksum(make([]byte, 32), castagnoli); got != 0x8A9136AA {
		t.Errorf("CRC32c(32 zeros) = %#x, want 0x8a9136aa", got)
	}
}

// Two packets whose octets tshark 4.x decodes with "Checksum Status:
// Good" (text2pcap -i 132, tshark -o sctp.checksum:CRC-32C -V):
//
//	INIT: Src Port: 20002, Dst Port: 20001, Verification tag: 0x00000000,
//	  Checksum (CRC32C): 0x02c2be13 [correct], INIT chunk: Initiate tag
//	  0x01020304, a_rwnd 865500, streams 1/1, Initial TSN 168496141
//	SACK+DATA: Verification tag 0x01020304, Checksum 0x2ed2e1d8 [correct],
//	  SACK (Cumulative TSN 168496140, a_rwnd 865500, gap 2-3, duplicate
//	  168496140), DATA (flags 0x03 B E, length 19, TSN 168496141, SID 0,
//	  SSN 0, PPID 0, "atm" padded to 20)
var knownPackets = []struct {
	name string
	hex  string
	pkt  Packet
}{
	{"INIT", "4e224e210000000002c2be130100001401020304000d34dc000100010a0b0c0d",
		Packet{SrcPort: 20002, DstPort: 20001, Chunks: []Chunk{Init{Tag: 0x01020304, Rwnd: 865500, OutStreams: 1, InStreams: 1, TSN: 0x0a0b0c0d}.Chunk(false)}}},
	{"SACK and DATA", "4e224e21010203042ed2e1d8030000180a0b0c0c000d34dc00010001000200030a0b0c0c000300130a0b0c0d000000000000000061746d00",
		Packet{SrcPort: 20002, DstPort: 20001, Tag: 0x01020304, Chunks: []Chunk{
			Sack{CumTSN: 0x0a0b0c0c, Rwnd: 865500, Gaps: []Gap{{2, 3}}, Dups: []uint32{0x0a0b0c0c}}.Chunk(),
			Data{TSN: 0x0a0b0c0d, Flags: FlagBeginning | FlagEnd, UserData: []byte("atm")}.Chunk()}}},
}

func TestKnownPackets(t *testing.T) {
	for _, tt := range knownPackets {
		want, _ := hex.DecodeString(tt.hex)
		if got := tt.pkt.Append(nil); !bytes.Equal(got, want) {
			t.Errorf("%s: Append = %x, want %s", tt.name, got, tt.hex)
		}
		p, err := Parse(want)
		if err != nil || len(p.Chunks) != len(tt.pkt.Chunks) || p.Tag != tt.pkt.Tag || p.SrcPort != 20002 {
			t.Fatalf("%s: Parse = %+v, %v", tt.name, p, err)
		}
		if !bytes.Equal(p.Append(nil), want) {
			t.Errorf("%s: Append(Parse) differs", tt.name)
		}
	}
	p, _ := Parse(mustHex(knownPackets[1].hex))
	s, err := ParseSack(p.Chunks[0])
	if err != nil || s.CumTSN != 0x0a0b0c0c || s.Rwnd != 865500 || len(s.Gaps) != 1 || s.Gaps[0] != (Gap{2, 3}) || len(s.Dups) != 1 {
		t.Errorf("ParseSack = %+v, %v", s, err)
	}
	d, err := ParseData(p.Chunks[1])
	if err != nil || d.TSN != 0x0a0b0c0d || d.Flags != FlagBeginning|FlagEnd || string(d.UserData) != "atm" {
		t.Errorf("ParseData = %+v, %v", d, err)
	}
	p, _ = Parse(mustHex(knownPackets[0].hex))
	in, err := ParseInit(p.Chunks[0])
	if err != nil || in.Tag != 0x01020304 || in.Rwnd != 865500 || in.TSN != 0x0a0b0c0d || in.OutStreams != 1 {
		t.Errorf("ParseInit = %+v, %v", in, err)
	}
	ack := Init{Tag: 9, Rwnd: 1, OutStreams: 1, InStreams: 1, TSN: 5, Cookie: []byte{1, 2, 3, 4, 5}}.Chunk(true)
	if in, err := ParseInit(ack); err != nil || !bytes.Equal(in.Cookie, []byte{1, 2, 3, 4, 5}) {
		t.Errorf("INIT ACK's cookie: %+v, %v", in, err)
	}
}

func mustHex(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// A flipped bit fails the CRC; a chunk longer than the packet, or
// padding that is not zero, is refused.
func TestParseRefusesDamage(t *testing.T) {
	good := mustHex(knownPackets[1].hex)
	bad := bytes.Clone(good)
	bad[20] ^= 1
	if _, err := Parse(bad); !errors.Is(err, ErrChecksum) {
		t.Errorf("a flipped bit: %v, want ErrChecksum", err)
	}
	if _, err := Parse(good[:11]); !errors.Is(err, ErrShort) {
		t.Errorf("11 octets: %v, want ErrShort", err)
	}
	long := Packet{Chunks: []Chunk{{Type: TypeData, Value: []byte{1, 2, 3}}}}.Append(nil)
	long[len(long)-1] = 7 // padding
	fix := func(b []byte) []byte {
		b[8], b[9], b[10], b[11] = 0, 0, 0, 0
		c := Checksum(b)
		b[8], b[9], b[10], b[11] = byte(c), byte(c>>8), byte(c>>16), byte(c>>24)
		return b
	}
	if _, err := Parse(fix(long)); !errors.Is(err, ErrChunk) {
		t.Errorf("padding 7: %v, want ErrChunk", err)
	}
	long[15] = 200 // chunk length past the end
	if _, err := Parse(fix(long)); !errors.Is(err, ErrChunk) {
		t.Errorf("a chunk past the end: %v, want ErrChunk", err)
	}
}

// FuzzParse: Parse never panics, and a packet it accepts is written back
// octet for octet; its chunks' decoders never panic either.
func FuzzParse(f *testing.F) {
	for _, tt := range knownPackets {
		f.Add(mustHex(tt.hex))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := Parse(b)
		if err != nil {
			return
		}
		if got := p.Append(nil); !bytes.Equal(got, b) {
			t.Fatalf("Append(Parse(%x)) = %x", b, got)
		}
		for _, c := range p.Chunks {
			ParseData(c)
			ParseSack(c)
			ParseInit(c)
		}
	})
}
