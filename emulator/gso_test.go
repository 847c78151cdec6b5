package emulator

import (
	"bytes"
	"encoding/binary"
	"net"
	"slices"
	"testing"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
)

var (
	gsoSrcMAC = net.HardwareAddr{0x02, 0, 0, 0, 0, 1}
	gsoDstMAC = net.HardwareAddr{0x02, 0, 0, 0, 0, 2}
	gsoTSopt  = []layers.TCPOption{{OptionType: layers.TCPOptionKindNop}, {OptionType: layers.TCPOptionKindNop},
		{OptionType: layers.TCPOptionKindTimestamps, OptionLength: 10, OptionData: []byte{0, 0, 1, 0, 0, 0, 2, 0}}}
)

// tcpFlags is what a test frame's TCP header says.
type tcpFlags struct{ fin, psh, cwr, ece bool }

// buildFrame serialises an Ethernet frame with gopacket, the reference the
// segmentation is checked against: lengths and checksums computed by it,
// independently of gso.go.
func buildFrame(t *testing.T, v6, tcp bool, id uint16, seq uint32, fl tcpFlags, payload []byte) []byte {
	t.Helper()
	eth := &layers.Ethernet{SrcMAC: gsoSrcMAC, DstMAC: gsoDstMAC, EthernetType: layers.EthernetTypeIPv4}
	var net gopacket.NetworkLayer
	var ls []gopacket.SerializableLayer
	if v6 {
		eth.EthernetType = layers.EthernetTypeIPv6
		ip := &layers.IPv6{Version: 6, HopLimit: 64, SrcIP: net6("fd00::1"), DstIP: net6("fd00::2"), NextHeader: layers.IPProtocolUDP}
		if tcp {
			ip.NextHeader = layers.IPProtocolTCP
		}
		net = ip
		ls = append(ls, eth, ip)
	} else {
		ip := &layers.IPv4{Version: 4, IHL: 5, TTL: 64, Id: id, Flags: layers.IPv4DontFragment,
			SrcIP: []byte{10, 0, 0, 1}, DstIP: []byte{10, 0, 0, 2}, Protocol: layers.IPProtocolUDP}
		if tcp {
			ip.Protocol = layers.IPProtocolTCP
		}
		net = ip
		ls = append(ls, eth, ip)
	}
	if tcp {
		th := &layers.TCP{SrcPort: 40000, DstPort: 5201, Seq: seq, Ack: 77, ACK: true, Window: 501,
			FIN: fl.fin, PSH: fl.psh, CWR: fl.cwr, ECE: fl.ece, Options: gsoTSopt}
		th.SetNetworkLayerForChecksum(net)
		ls = append(ls, th)
	} else {
		uh := &layers.UDP{SrcPort: 40000, DstPort: 5201}
		uh.SetNetworkLayerForChecksum(net)
		ls = append(ls, uh)
	}
	ls = append(ls, gopacket.Payload(payload))
	buf := gopacket.NewSerializeBuffer()
	if err := gopacket.SerializeLayers(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, ls...); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func net6(s string) net.IP { return net.ParseIP(s) }

func payloadOf(n int) []byte {
	p := make([]byte, n)
	for i := range p {
		p[i] = byte(i*7 + i>>8)
	}
	return p
}

// A 3000-octet TCP/IPv4 super-frame with MSS 1448 is cut as TSO cuts it:
// 1448, 1448 and 104 octets of payload behind 66 octets of headers; IP IDs
// 0x1234, 0x1235, 0x1236; sequence numbers advance by 1448; CWR on the
// first segment only, FIN and PSH on the last only; every length and
// checksum as gopacket computes them for the same segments sent alone.
func TestSegmentTCPv4(t *testing.T) {
	payload := payloadOf(3000)
	const seq = 0xFFFFF000 // wraps within the frame
	super := buildFrame(t, false, true, 0x1234, seq, tcpFlags{fin: true, psh: true, cwr: true, ece: true}, payload)
	// The kernel hands over a partial checksum; the result must not depend on it.
	binary.BigEndian.PutUint16(super[EtherHeader+20+16:], 0xBEEF)
	h := VNetHdr{Flags: VNetNeedsCsum, GSOType: GSOTCPv4 | GSOECN, HdrLen: 66, GSOSize: 1448, CsumStart: 34, CsumOffset: 16}
	segs, err := Segment(nil, super, h)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]byte{
		buildFrame(t, false, true, 0x1234, seq, tcpFlags{cwr: true, ece: true}, payload[:1448]),
		buildFrame(t, false, true, 0x1235, seq+1448, tcpFlags{ece: true}, payload[1448:2896]),
		buildFrame(t, false, true, 0x1236, seq+2896, tcpFlags{fin: true, psh: true, ece: true}, payload[2896:]),
	}
	checkSegments(t, segs, want, []int{1514, 1514, 170})
	if n, hdr, err := SegmentCount(super, h); n != 3 || hdr != 66 || err != nil {
		t.Errorf("SegmentCount = %d, %d, %v; want 3, 66", n, hdr, err)
	}
}

func checkSegments(t *testing.T, got, want [][]byte, sizes []int) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d segments, want %d", len(got), len(want))
	}
	for i := range got {
		if len(got[i]) != sizes[i] {
			t.Errorf("segment %d: %d octets, want %d", i, len(got[i]), sizes[i])
		}
		if !bytes.Equal(got[i], want[i]) {
			t.Errorf("segment %d differs from the reference:\n got %x\nwant %x", i, got[i][:min(80, len(got[i]))], want[i][:min(80, len(want[i]))])
		}
		pkt := gopacket.NewPacket(got[i], layers.LayerTypeEthernet, gopacket.Default)
		if pkt.ErrorLayer() != nil {
			t.Errorf("segment %d does not decode: %v", i, pkt.ErrorLayer().Error())
		}
	}
}

// IPv6 TCP: payload length per segment, no ID; 2 x 1000 + 1 octets.
func TestSegmentTCPv6(t *testing.T) {
	payload := payloadOf(2001)
	super := buildFrame(t, true, true, 0, 1000, tcpFlags{psh: true}, payload)
	segs, err := Segment(nil, super, VNetHdr{Flags: VNetNeedsCsum, GSOType: GSOTCPv6, GSOSize: 1000, CsumStart: 54, CsumOffset: 16})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]byte{
		buildFrame(t, true, true, 0, 1000, tcpFlags{}, payload[:1000]),
		buildFrame(t, true, true, 0, 2000, tcpFlags{}, payload[1000:2000]),
		buildFrame(t, true, true, 0, 3000, tcpFlags{psh: true}, payload[2000:]),
	}
	checkSegments(t, segs, want, []int{1086, 1086, 87})
}

// UDP GSO (USO): each segment is a datagram with its own UDP header,
// length and checksum, and its own IPv4 ID.
func TestSegmentUDP(t *testing.T) {
	payload := payloadOf(2 * 1472)
	for _, v6 := range []bool{false, true} {
		super := buildFrame(t, v6, false, 9, 0, tcpFlags{}, payload)
		segs, err := Segment(nil, super, VNetHdr{Flags: VNetNeedsCsum, GSOType: GSOUDPL4, GSOSize: 1472})
		if err != nil {
			t.Fatal(err)
		}
		want := [][]byte{
			buildFrame(t, v6, false, 9, 0, tcpFlags{}, payload[:1472]),
			buildFrame(t, v6, false, 10, 0, tcpFlags{}, payload[1472:]),
		}
		size := 1514
		if v6 {
			size += 20
		}
		checkSegments(t, segs, want, []int{size, size})
	}
}

// A frame without GSO but with a partial checksum gets it completed, as a
// NIC's checksum offload does; without the flag it passes as it is.
func TestSegmentChecksumOffload(t *testing.T) {
	want := buildFrame(t, false, true, 1, 5, tcpFlags{psh: true}, payloadOf(101))
	partial := append([]byte(nil), want...)
	// What the kernel leaves in the field: the pseudo-header's sum, uncomplemented.
	pseudo := fold(sum(partial[26:34], 0) + protoTCP + uint64(len(partial)-34))
	binary.BigEndian.PutUint16(partial[34+16:], pseudo)
	segs, err := Segment(nil, partial, VNetHdr{Flags: VNetNeedsCsum, CsumStart: 34, CsumOffset: 16})
	if err != nil {
		t.Fatal(err)
	}
	checkSegments(t, segs, [][]byte{want}, []int{len(want)})
	segs, _ = Segment(nil, partial, VNetHdr{})
	if !bytes.Equal(segs[0], partial) {
		t.Error("a frame without offload flags changed")
	}
	if _, err := Segment(nil, partial, VNetHdr{Flags: VNetNeedsCsum, CsumStart: 34, CsumOffset: 200}); err == nil {
		t.Error("a checksum position past the frame was accepted")
	}
}

// Super-frames segmentation cannot cut are refused, not guessed at.
func TestSegmentRefuses(t *testing.T) {
	tcp4 := buildFrame(t, false, true, 1, 1, tcpFlags{}, payloadOf(3000))
	udp4 := buildFrame(t, false, false, 1, 1, tcpFlags{}, payloadOf(3000))
	for name, c := range map[string]struct {
		f []byte
		h VNetHdr
	}{
		"ufo":           {udp4, VNetHdr{GSOType: GSOUDP, GSOSize: 1472}},
		"tcp as v6":     {tcp4, VNetHdr{GSOType: GSOTCPv6, GSOSize: 1448}},
		"udp as tcp":    {udp4, VNetHdr{GSOType: GSOTCPv4, GSOSize: 1448}},
		"zero gso_size": {tcp4, VNetHdr{GSOType: GSOTCPv4}},
		"truncated":     {tcp4[:40], VNetHdr{GSOType: GSOTCPv4, GSOSize: 1448}},
		"unknown type":  {tcp4, VNetHdr{GSOType: 9, GSOSize: 1448}},
	} {
		if _, err := Segment(nil, c.f, c.h); err == nil {
			t.Errorf("%s: accepted", name)
		}
		if _, _, err := SegmentCount(c.f, c.h); err == nil {
			t.Errorf("%s: counted", name)
		}
	}
}

func TestVNetHdrRoundTrip(t *testing.T) {
	h := VNetHdr{Flags: 1, GSOType: GSOTCPv4 | GSOECN, HdrLen: 66, GSOSize: 1448, CsumStart: 34, CsumOffset: 16}
	var b [VNetHdrLen]byte
	h.Put(b[:])
	if want := []byte{1, 0x81, 66, 0, 0xa8, 0x05, 34, 0, 16, 0}; !bytes.Equal(b[:], want) {
		t.Errorf("encoded % x, want % x", b, want)
	}
	if got, err := DecodeVNetHdr(b[:]); got != h || err != nil {
		t.Errorf("decoded %+v, %v", got, err)
	}
	if _, err := DecodeVNetHdr(b[:9]); err == nil {
		t.Error("a short header decoded")
	}
}

// FuzzSegment: whatever the kernel (or a corrupt read) hands over, Segment
// does not panic, and the segments it returns carry the frame's payload in
// order, none longer than its headers plus gso_size.
func FuzzSegment(f *testing.F) {
	tcp := func(n int) []byte {
		b := make([]byte, 66+n)
		binary.BigEndian.PutUint16(b[12:], etherTypeIPv4)
		b[14], b[23], b[46] = 0x45, protoTCP, 0x80
		return b
	}
	f.Add(tcp(3000), []byte{1, 1, 66, 0, 0xa8, 5, 34, 0, 16, 0})
	f.Add(tcp(10), []byte{1, 0, 0, 0, 0, 0, 34, 0, 16, 0})
	f.Fuzz(func(t *testing.T, frame, hb []byte) {
		h, err := DecodeVNetHdr(hb)
		if err != nil {
			return
		}
		segs, err := Segment(nil, frame, h)
		if err != nil || h.GSOType&^GSOECN == GSONone {
			return
		}
		n, hdr, err := SegmentCount(frame, h)
		if err != nil || n != len(segs) {
			t.Fatalf("SegmentCount %d, %v; Segment gave %d", n, err, len(segs))
		}
		var joined []byte
		for _, s := range segs {
			if len(s) > hdr+int(h.GSOSize) {
				t.Fatalf("segment of %d octets, headers %d, gso_size %d", len(s), hdr, h.GSOSize)
			}
			joined = append(joined, s[hdr:]...)
		}
		if !bytes.Equal(joined, frame[hdr:]) {
			t.Fatal("segments do not carry the payload in order")
		}
	})
}

type written struct {
	h VNetHdr
	f []byte
}

func coalesce(frames ...[]byte) []written {
	var c Coalescer
	var out []written
	emit := func(h VNetHdr, f []byte) { out = append(out, written{h, append([]byte(nil), f...)}) }
	for _, f := range frames {
		c.Add(f, emit)
	}
	c.Flush(emit)
	return out
}

// The coalescer undoes Segment: the segments of a TCP super-frame become
// that super-frame again, with a partial checksum and the header that says
// so, and cutting it again gives the same segments.
func TestCoalesceRoundTrip(t *testing.T) {
	payload := payloadOf(10*1448 + 500)
	super := buildFrame(t, false, true, 7, 1e6, tcpFlags{psh: true, cwr: true}, payload)
	h := VNetHdr{GSOType: GSOTCPv4, GSOSize: 1448}
	segs, err := Segment(nil, super, h)
	if err != nil {
		t.Fatal(err)
	}
	out := coalesce(segs...)
	if len(out) != 1 {
		t.Fatalf("%d writes, want 1", len(out))
	}
	want := append([]byte(nil), super...)
	binary.BigEndian.PutUint16(want[34+16:], fold(sum(want[26:34], 0)+protoTCP+uint64(len(want)-34)))
	if !bytes.Equal(out[0].f, want) {
		t.Errorf("coalesced frame differs:\n got %x\nwant %x", out[0].f[:80], want[:80])
	}
	wantH := VNetHdr{Flags: VNetNeedsCsum, GSOType: GSOTCPv4 | GSOECN, HdrLen: 66, GSOSize: 1448, CsumStart: 34, CsumOffset: 16}
	if out[0].h != wantH {
		t.Errorf("header %+v, want %+v", out[0].h, wantH)
	}
	again, err := Segment(nil, out[0].f, out[0].h)
	if err != nil || len(again) != len(segs) {
		t.Fatalf("cut again: %d segments, %v", len(again), err)
	}
	for i := range segs {
		if !bytes.Equal(again[i], segs[i]) {
			t.Errorf("segment %d differs after a round trip", i)
		}
	}
}

// What may not join is written as it is, and ends the super-frame before
// it: another flow, a gap in the sequence, a PSH (which joins, then ends
// it), a FIN, a segment after a short one, UDP, a single segment.
func TestCoalesceBoundaries(t *testing.T) {
	p := payloadOf(1448)
	seg := func(id uint16, seq uint32, fl tcpFlags, n int) []byte {
		return buildFrame(t, false, true, id, seq, fl, p[:n])
	}
	other := seg(2, 1448, tcpFlags{}, 1448)
	other[EtherHeader+20+1]++ // another destination port
	binary.BigEndian.PutUint16(other[EtherHeader+20+16:], 0)
	udp := buildFrame(t, false, false, 9, 0, tcpFlags{}, p[:100])
	ack := buildFrame(t, false, true, 1, 5, tcpFlags{}, nil)
	ack[EtherHeader+20+1]++ // the reverse stream's ACK: another flow
	binary.BigEndian.PutUint16(ack[EtherHeader+20+16:], 0)
	frames := [][]byte{
		seg(1, 0, tcpFlags{}, 1448), ack, seg(2, 1448, tcpFlags{psh: true}, 1448), // joined across another flow's ACK, PSH ends it
		seg(3, 2896, tcpFlags{}, 1448), other, // another flow between
		seg(4, 4344, tcpFlags{}, 1448), seg(5, 9999, tcpFlags{}, 1448), // a gap
		seg(6, 11447, tcpFlags{}, 1000), seg(7, 12447, tcpFlags{}, 1000), // short, then more
		seg(8, 13447, tcpFlags{fin: true}, 10), udp,
	}
	out := coalesce(frames...)
	var sizes []int
	for _, w := range out {
		sizes = append(sizes, len(w.f))
		if (w.h.GSOType != GSONone) != (len(w.f) > 1514) {
			t.Errorf("a %d-octet write with gso type %d", len(w.f), w.h.GSOType)
		}
	}
	// The segment after the gap starts a super-frame that the short one ends.
	want := []int{len(ack), 66 + 2896, 1514, 1514, 1514, 66 + 1448 + 1000, 1066, 76, len(udp)}
	if !slices.Equal(sizes, want) {
		t.Errorf("writes of %v octets, want %v", sizes, want)
	}
	if f := out[1].f; f[EtherHeader+20+13]&tcpPSH == 0 {
		t.Error("the PSH of the last joined segment is lost")
	}
}

// BenchmarkSegment cuts a 64 KB TCP/IPv4 super-frame (45 segments of 1448
// octets) as the loop does for every super-frame a host's TAP hands over.
func BenchmarkSegment(b *testing.B) {
	var t testing.T
	super := buildFrame(&t, false, true, 1, 1, tcpFlags{psh: true}, payloadOf(45*1448))
	h := VNetHdr{GSOType: GSOTCPv4, GSOSize: 1448}
	var segs [][]byte
	b.SetBytes(int64(len(super)))
	b.ReportAllocs()
	for b.Loop() {
		segs, _ = Segment(segs[:0], super, h)
	}
}
