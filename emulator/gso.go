package emulator

import (
	"bytes"
	"encoding/binary"
	"errors"
)

// Super-frames: a TAP opened with IFF_VNET_HDR and offloads on hands over
// TCP and UDP frames of up to 64 KB with a virtio_net_hdr in front (the
// kernel skips segmenting them, as it would for a NIC with TSO), and takes
// such frames back. The models bill, queue and drop wire frames, so a
// super-frame is cut here into the frames a NIC's TSO or USO would put on
// the wire, each with its own headers and correct checksums; and wire
// frames on their way to a host may be joined again (GRO) into one write.

// VNetHdr is struct virtio_net_hdr (linux/virtio_net.h), the 10 octets a
// TAP with IFF_VNET_HDR puts before every frame, in the host's byte order
// (little-endian on the machines atmlab runs on).
type VNetHdr struct {
	Flags      uint8  // VNetNeedsCsum, VNetDataValid
	GSOType    uint8  // GSONone, GSOTCPv4, GSOTCPv6, GSOUDPL4; | GSOECN
	HdrLen     uint16 // a hint only: the headers are parsed from the frame
	GSOSize    uint16 // payload octets per segment
	CsumStart  uint16 // where the checksummed part begins
	CsumOffset uint16 // where the checksum sits, from CsumStart
}

// VNetHdrLen is the size of VNetHdr on the wire (TUNSETVNETHDRSZ's default).
const VNetHdrLen = 10

// virtio_net_hdr flags and GSO types.
const (
	VNetNeedsCsum = 1 // the checksum at CsumStart+CsumOffset is a partial one to complete
	VNetDataValid = 2 // the checksums were checked

	GSONone  = 0
	GSOTCPv4 = 1
	GSOUDP   = 3 // UFO, IP fragmentation: not offered, refused
	GSOTCPv6 = 4
	GSOUDPL4 = 5 // USO: segments with their own UDP headers
	GSOECN   = 0x80
)

// DecodeVNetHdr reads the header at the start of b.
func DecodeVNetHdr(b []byte) (VNetHdr, error) {
	if len(b) < VNetHdrLen {
		return VNetHdr{}, errShort
	}
	le := binary.LittleEndian
	return VNetHdr{Flags: b[0], GSOType: b[1], HdrLen: le.Uint16(b[2:]), GSOSize: le.Uint16(b[4:]),
		CsumStart: le.Uint16(b[6:]), CsumOffset: le.Uint16(b[8:])}, nil
}

// Put writes h into the first VNetHdrLen octets of b.
func (h VNetHdr) Put(b []byte) {
	le := binary.LittleEndian
	b[0], b[1] = h.Flags, h.GSOType
	le.PutUint16(b[2:], h.HdrLen)
	le.PutUint16(b[4:], h.GSOSize)
	le.PutUint16(b[6:], h.CsumStart)
	le.PutUint16(b[8:], h.CsumOffset)
}

var (
	errShort   = errors.New("gso: frame too short for its headers")
	errGSOType = errors.New("gso: unsupported gso type")
	errProto   = errors.New("gso: frame is not the TCP or UDP its gso type says")
	errCsum    = errors.New("gso: checksum position outside the frame")
)

// EtherTypes and IP protocols segmentation knows.
const (
	etherTypeIPv4 = 0x0800
	etherTypeIPv6 = 0x86DD
	protoTCP      = 6
	protoUDP      = 17
)

// TCP flags (RFC 9293, RFC 3168).
const (
	tcpFIN = 0x01
	tcpPSH = 0x08
	tcpCWR = 0x80
)

// l3 is what segmentation needs of an Ethernet frame's IP header.
type l3 struct {
	v6     bool
	ip     int // offset of the IP header
	l4     int // offset of the TCP or UDP header
	proto  int
	hdrEnd int // end of the TCP or UDP header: where the payload starts
}

// parseL3 finds the IP and transport headers of an untagged Ethernet frame.
func parseL3(f []byte) (l3, error) {
	if len(f) < EtherHeader+20 {
		return l3{}, errShort
	}
	var h l3
	h.ip = EtherHeader
	switch binary.BigEndian.Uint16(f[12:]) {
	case etherTypeIPv4:
		ihl := int(f[h.ip]&0x0F) * 4
		if f[h.ip]>>4 != 4 || ihl < 20 || len(f) < h.ip+ihl {
			return l3{}, errProto
		}
		h.l4, h.proto = h.ip+ihl, int(f[h.ip+9])
	case etherTypeIPv6:
		if len(f) < h.ip+40 || f[h.ip]>>4 != 6 {
			return l3{}, errProto
		}
		h.v6, h.l4, h.proto = true, h.ip+40, int(f[h.ip+6]) // extension headers: not offloaded
	default:
		return l3{}, errProto
	}
	switch h.proto {
	case protoTCP:
		if len(f) < h.l4+20 {
			return l3{}, errShort
		}
		h.hdrEnd = h.l4 + int(f[h.l4+12]>>4)*4
		if h.hdrEnd < h.l4+20 {
			return l3{}, errProto
		}
	case protoUDP:
		h.hdrEnd = h.l4 + 8
	default:
		return h, nil
	}
	if len(f) < h.hdrEnd {
		return l3{}, errShort
	}
	return h, nil
}

// SegmentCount returns how many wire frames a frame of n octets (without
// its VNetHdr) becomes, and the octets of headers every segment repeats;
// an error if h is not a super-frame segmentation can cut.
func SegmentCount(frame []byte, h VNetHdr) (segs, hdr int, err error) {
	if h.GSOType&^GSOECN == GSONone {
		return 1, 0, nil
	}
	p, err := gsoHeaders(frame, h)
	if err != nil {
		return 0, 0, err
	}
	payload, mss := len(frame)-p.hdrEnd, int(h.GSOSize)
	return max(1, (payload+mss-1)/mss), p.hdrEnd, nil
}

// gsoHeaders checks that a super-frame is what its GSO type says.
func gsoHeaders(frame []byte, h VNetHdr) (l3, error) {
	p, err := parseL3(frame)
	if err != nil {
		return p, err
	}
	want, v6 := protoTCP, false
	switch h.GSOType &^ GSOECN {
	case GSOTCPv4:
	case GSOTCPv6:
		v6 = true
	case GSOUDPL4:
		want, v6 = protoUDP, p.v6
	default:
		return p, errGSOType
	}
	if p.proto != want || p.v6 != v6 || h.GSOSize == 0 {
		return p, errProto
	}
	return p, nil
}

// Super says how a super-frame is cut into wire frames: the plan Segment
// follows, kept on a Frame (Frame.GSO) so that the frame can travel the
// models whole and be cut only where a wire frame must exist (CutSegment).
// The zero value means the frame is one wire frame.
type Super struct {
	Segs int // wire frames it becomes; 0: not a super-frame
	MSS  int // payload octets per segment (the last one may be shorter)
	p    l3
}

// PlanSuper checks a frame read with header h and returns how it is cut.
// A frame that is not a super-frame but carries a partial checksum
// (VNetNeedsCsum) gets it completed in place, and its plan is the zero
// Super; other frames too.
func PlanSuper(frame []byte, h VNetHdr) (Super, error) {
	if h.GSOType&^GSOECN == GSONone {
		if h.Flags&VNetNeedsCsum != 0 {
			return Super{}, completeCsum(frame, int(h.CsumStart), int(h.CsumOffset))
		}
		return Super{}, nil
	}
	p, err := gsoHeaders(frame, h)
	if err != nil {
		return Super{}, err
	}
	mss := int(h.GSOSize)
	return Super{Segs: max(1, (len(frame)-p.hdrEnd+mss-1)/mss), MSS: mss, p: p}, nil
}

// SegLen returns the octets of segment k of a frame of n octets cut by sp.
func (sp Super) SegLen(n, k int) int {
	if sp.Segs == 0 {
		return n
	}
	return sp.p.hdrEnd + min(sp.MSS, n-sp.p.hdrEnd-k*sp.MSS)
}

// WireLen returns the octets segments first to first+count-1 of a frame of
// n octets hold together (each with its headers).
func (sp Super) WireLen(n, first, count int) int {
	if sp.Segs == 0 {
		return n
	}
	last := first + count - 1
	return count*sp.p.hdrEnd + (count-1)*sp.MSS + min(sp.MSS, n-sp.p.hdrEnd-last*sp.MSS)
}

// CutSegment appends segment k of frame, cut by sp, to dst and returns
// the result: the headers of the first segment with IPv4 total length, ID
// (one more each segment) and header checksum; IPv6 payload length; TCP
// sequence number advanced by the payload before it, FIN and PSH only on
// the last segment and CWR only on the first (as Linux's
// tcp_gso_segment); UDP length; every TCP and UDP checksum in full. A
// frame that is not a super-frame is appended as it is. frame is not
// modified, so one buffer can hold many segments (see Segment).
func CutSegment(dst, frame []byte, sp Super, k int) []byte {
	if sp.Segs == 0 {
		return append(dst, frame...)
	}
	p, mss := sp.p, sp.MSS
	hdr, payload := frame[:p.hdrEnd], frame[p.hdrEnd:]
	part := payload[k*mss : min(len(payload), (k+1)*mss)]
	at := len(dst)
	dst = append(append(dst, hdr...), part...)
	s := dst[at:]
	l4len := len(s) - p.l4
	if p.v6 {
		binary.BigEndian.PutUint16(s[p.ip+4:], uint16(len(s)-p.ip-40))
	} else {
		id := binary.BigEndian.Uint16(hdr[p.ip+4:])
		binary.BigEndian.PutUint16(s[p.ip+2:], uint16(len(s)-p.ip))
		binary.BigEndian.PutUint16(s[p.ip+4:], id+uint16(k))
		putIPv4Checksum(s[p.ip:p.l4])
	}
	switch p.proto {
	case protoTCP:
		seq := binary.BigEndian.Uint32(hdr[p.l4+4:])
		binary.BigEndian.PutUint32(s[p.l4+4:], seq+uint32(k*mss))
		f := hdr[p.l4+13]
		if k < sp.Segs-1 {
			f &^= tcpFIN | tcpPSH
		}
		if k > 0 {
			f &^= tcpCWR
		}
		s[p.l4+13] = f
		putL4Checksum(s, p, l4len, 16)
	case protoUDP:
		binary.BigEndian.PutUint16(s[p.l4+4:], uint16(l4len))
		putL4Checksum(s, p, l4len, 6)
	}
	return dst
}

// Segment cuts a frame read with header h into the wire frames a NIC would
// send (CutSegment, after PlanSuper), appending them to out. A frame that
// is not a super-frame but carries a partial checksum gets it completed.
// The segments share one new buffer, one allocation for the super-frame
// however many segments it has; frame is not modified.
func Segment(out [][]byte, frame []byte, h VNetHdr) ([][]byte, error) {
	f := frame
	if h.GSOType&^GSOECN == GSONone && h.Flags&VNetNeedsCsum != 0 {
		f = append([]byte(nil), frame...) // completed in the copy
	}
	sp, err := PlanSuper(f, h)
	if err != nil {
		return out, err
	}
	if sp.Segs == 0 {
		if len(f) > 0 && &f[0] == &frame[0] {
			f = append([]byte(nil), frame...)
		}
		return append(out, f), nil
	}
	buf := make([]byte, 0, sp.WireLen(len(frame), 0, sp.Segs))
	for k := range sp.Segs {
		at := len(buf)
		buf = CutSegment(buf, frame, sp, k)
		out = append(out, buf[at:len(buf):len(buf)])
	}
	return out, nil
}

// completeCsum finishes a partial checksum as a NIC's checksum offload
// does: the field holds the pseudo-header's sum, and the checksum of
// everything from start on goes into it.
func completeCsum(f []byte, start, offset int) error {
	at := start + offset
	if start < 0 || at+2 > len(f) {
		return errCsum
	}
	binary.BigEndian.PutUint16(f[at:], ^fold(sum(f[start:], 0)))
	return nil
}

// putIPv4Checksum writes an IPv4 header's checksum (RFC 791).
func putIPv4Checksum(ip []byte) {
	ip[10], ip[11] = 0, 0
	binary.BigEndian.PutUint16(ip[10:], ^fold(sum(ip, 0)))
}

// putL4Checksum writes the TCP or UDP checksum (at field, from the
// transport header) of frame f, whose transport segment is l4len octets:
// the pseudo-header (RFC 9293 §3.1, RFC 8200 §8.1) and the segment. A UDP
// checksum that comes out 0 is sent as 0xFFFF (RFC 768).
func putL4Checksum(f []byte, p l3, l4len, field int) {
	f[p.l4+field], f[p.l4+field+1] = 0, 0
	var acc uint64
	if p.v6 {
		acc = sum(f[p.ip+8:p.ip+40], 0)
	} else {
		acc = sum(f[p.ip+12:p.ip+20], 0)
	}
	acc += uint64(p.proto) + uint64(l4len)
	c := ^fold(sum(f[p.l4:], acc))
	if c == 0 && p.proto == protoUDP {
		c = 0xFFFF
	}
	binary.BigEndian.PutUint16(f[p.l4+field:], c)
}

// sum adds b as big-endian 16-bit words (RFC 1071) to acc, unfolded. It
// adds 32-bit words, which folds to the same sum (2^16 is 1 modulo
// 0xFFFF), and keeps well within 64 bits for any frame.
func sum(b []byte, acc uint64) uint64 {
	for len(b) >= 16 {
		acc += uint64(binary.BigEndian.Uint32(b)) + uint64(binary.BigEndian.Uint32(b[4:])) +
			uint64(binary.BigEndian.Uint32(b[8:])) + uint64(binary.BigEndian.Uint32(b[12:]))
		b = b[16:]
	}
	for ; len(b) >= 2; b = b[2:] {
		acc += uint64(binary.BigEndian.Uint16(b))
	}
	if len(b) == 1 {
		acc += uint64(b[0]) << 8
	}
	return acc
}

// fold reduces an unfolded sum to 16 bits, one's complement.
func fold(acc uint64) uint16 {
	for acc > 0xFFFF {
		acc = acc&0xFFFF + acc>>16
	}
	return uint16(acc)
}

// Coalescer joins consecutive TCP/IPv4 segments of one flow into
// super-frames for one write to a host's TAP, as a NIC's GRO would, so the
// receiving host's kernel handles tens of frames as one. Segments join when
// they continue the first one exactly: same Ethernet and IP header but for
// length, ID (one more each) and checksum; same ports, acknowledgement,
// window and options; sequence numbers back to back; every payload but
// the last as long as the first; no flags but ACK, PSH (which ends the
// super-frame) and the first one's ECE and CWR. Anything else is written
// as it is: a frame of the same flow after the super-frame, one of another
// flow (a pure ACK, UDP, ARP) at once, while the super-frame keeps growing. A super-frame is handed out as soon as it ends (PSH, a short
// segment, a frame that does not continue it, 64 KB); Flush hands out one
// that has not ended yet (the caller's hold time is over). The zero value
// is ready.
type Coalescer struct {
	buf  []byte // the super-frame so far
	n    int    // segments in it
	mss  int    // the first segment's payload
	p    l3
	next uint32 // the sequence number that continues it
	id   uint16 // the IP ID that continues it
}

// coalesceMax keeps a super-frame's IP datagram within its 16-bit length.
const coalesceMax = 65535 + EtherHeader

// Add appends a wire frame; out receives each frame or super-frame that
// can no longer grow, with the header to write before it. The frame's
// bytes are copied if they are kept.
func (c *Coalescer) Add(frame []byte, out func(h VNetHdr, frame []byte)) {
	p, ok := joinable(frame)
	if ok && c.n > 0 && c.continues(frame, p) {
		payload := frame[p.hdrEnd:]
		c.buf = append(c.buf, payload...)
		c.n++
		c.next += uint32(len(payload))
		c.id++
		ended := frame[p.l4+13]&tcpPSH != 0 || len(payload) < c.mss
		if ended {
			c.buf[c.p.l4+13] |= tcpPSH & frame[p.l4+13]
			c.Flush(out)
		}
		return
	}
	if !ok {
		// Another flow's frame (the ACKs of the reverse stream between
		// this one's segments) passes without ending the super-frame, as
		// GRO keeps a list per flow; one of this flow goes after it.
		if c.n > 0 && c.sameFlow(frame) {
			c.Flush(out)
		}
		out(VNetHdr{}, frame)
		return
	}
	c.Flush(out)
	c.buf = append(c.buf[:0], frame...)
	c.n, c.p, c.mss = 1, p, len(frame)-p.hdrEnd
	c.next = binary.BigEndian.Uint32(frame[p.l4+4:]) + uint32(c.mss)
	c.id = binary.BigEndian.Uint16(frame[p.ip+4:]) + 1
	if frame[p.l4+13]&tcpPSH != 0 {
		c.Flush(out)
	}
}

// Holding reports whether Add kept frames that Flush would hand out.
func (c *Coalescer) Holding() bool { return c.n > 0 }

// Flush hands out the frame being built, if any.
func (c *Coalescer) Flush(out func(h VNetHdr, frame []byte)) {
	if c.n == 0 {
		return
	}
	n := c.n
	c.n = 0
	if n == 1 {
		out(VNetHdr{}, c.buf)
		return
	}
	p, f := c.p, c.buf
	binary.BigEndian.PutUint16(f[p.ip+2:], uint16(len(f)-p.ip))
	putIPv4Checksum(f[p.ip:p.l4])
	// A partial checksum, as the kernel's own GSO packets carry: the
	// pseudo-header's sum; the receiver trusts it or completes it.
	acc := sum(f[p.ip+12:p.ip+20], 0) + protoTCP + uint64(len(f)-p.l4)
	binary.BigEndian.PutUint16(f[p.l4+16:], fold(acc))
	h := VNetHdr{Flags: VNetNeedsCsum, GSOType: GSOTCPv4, HdrLen: uint16(p.hdrEnd), GSOSize: uint16(c.mss),
		CsumStart: uint16(p.l4), CsumOffset: 16}
	if f[p.l4+13]&tcpCWR != 0 {
		h.GSOType |= GSOECN
	}
	out(h, f)
}

// joinable parses a frame that may take part in a super-frame: TCP over
// IPv4 without IP options or fragments, carrying a payload, with no flags
// beyond ACK, PSH, ECE and CWR.
func joinable(f []byte) (l3, bool) {
	p, err := parseL3(f)
	if err != nil || p.v6 || p.proto != protoTCP || p.l4 != p.ip+20 || len(f) == p.hdrEnd {
		return p, false
	}
	frag := binary.BigEndian.Uint16(f[p.ip+6:]) & 0x3FFF // MF and offset
	if frag != 0 || int(binary.BigEndian.Uint16(f[p.ip+2:])) != len(f)-p.ip {
		return p, false
	}
	const allowed = 0x10 | tcpPSH | 0x40 | tcpCWR // ACK, PSH, ECE, CWR
	return p, f[p.l4+13]&^allowed == 0 && f[p.l4+13]&0x10 != 0
}

// sameFlow reports whether f is TCP/IPv4 between the addresses and ports
// of the super-frame being built, in its direction.
func (c *Coalescer) sameFlow(f []byte) bool {
	p, err := parseL3(f)
	if err != nil || p.v6 || p.proto != protoTCP {
		return false
	}
	b := c.buf
	return bytes.Equal(f[p.ip+12:p.ip+20], b[c.p.ip+12:c.p.ip+20]) && bytes.Equal(f[p.l4:p.l4+4], b[c.p.l4:c.p.l4+4])
}

// continues reports whether f, joinable, is the next segment of the
// super-frame being built.
func (c *Coalescer) continues(f []byte, p l3) bool {
	b := c.buf
	if p.hdrEnd != c.p.hdrEnd || len(f)-p.hdrEnd > c.mss || len(b)+len(f)-p.hdrEnd > coalesceMax ||
		f[p.l4+13]&tcpCWR != 0 || f[p.l4+13]&0x40 != b[c.p.l4+13]&0x40 {
		return false
	}
	if binary.BigEndian.Uint32(f[p.l4+4:]) != c.next || binary.BigEndian.Uint16(f[p.ip+4:]) != c.id {
		return false
	}
	// Ethernet header; IP version to fragment field but length and ID;
	// TTL, protocol, addresses; ports; acknowledgement, offset, window,
	// urgent pointer, options.
	return bytes.Equal(f[:p.ip+2], b[:p.ip+2]) && bytes.Equal(f[p.ip+6:p.ip+10], b[p.ip+6:p.ip+10]) &&
		bytes.Equal(f[p.ip+12:p.l4+4], b[p.ip+12:p.l4+4]) && bytes.Equal(f[p.l4+8:p.l4+13], b[p.l4+8:p.l4+13]) &&
		bytes.Equal(f[p.l4+14:p.l4+16], b[p.l4+14:p.l4+16]) && bytes.Equal(f[p.l4+18:p.hdrEnd], b[p.l4+18:p.hdrEnd])
}

// SuperRange returns segments first to first+n-1 of TCP super-frame data
// (cut by sp) as one super-frame for a host's TAP, as a NIC's GRO would
// have joined them: the headers of segment first with the lengths of the
// whole range (written to hdr, which must hold sp's headers), its payload
// (a slice of data, not copied), and the VNetHdr to write before them.
// Its TCP checksum is a partial one (the pseudo-header's sum), which the
// receiving kernel trusts or completes, as for the kernel's own GSO
// packets. A range of one segment is written as a plain frame with a
// partial checksum.
func SuperRange(hdr, data []byte, sp Super, first, n int) (VNetHdr, []byte, []byte) {
	p, mss := sp.p, sp.MSS
	payload := data[p.hdrEnd:]
	payload = payload[first*mss : min(len(payload), (first+n)*mss)]
	h := hdr[:p.hdrEnd]
	copy(h, data[:p.hdrEnd])
	total := p.hdrEnd + len(payload)
	if p.v6 {
		binary.BigEndian.PutUint16(h[p.ip+4:], uint16(total-p.ip-40))
	} else {
		id := binary.BigEndian.Uint16(data[p.ip+4:])
		binary.BigEndian.PutUint16(h[p.ip+2:], uint16(total-p.ip))
		binary.BigEndian.PutUint16(h[p.ip+4:], id+uint16(first))
		putIPv4Checksum(h[p.ip:p.l4])
	}
	seq := binary.BigEndian.Uint32(data[p.l4+4:])
	binary.BigEndian.PutUint32(h[p.l4+4:], seq+uint32(first*mss))
	f := data[p.l4+13]
	if first+n < sp.Segs {
		f &^= tcpFIN | tcpPSH
	}
	if first > 0 {
		f &^= tcpCWR
	}
	h[p.l4+13] = f
	var acc uint64
	if p.v6 {
		acc = sum(h[p.ip+8:p.ip+40], 0)
	} else {
		acc = sum(h[p.ip+12:p.ip+20], 0)
	}
	acc += protoTCP + uint64(total-p.l4)
	binary.BigEndian.PutUint16(h[p.l4+16:], fold(acc))
	vh := VNetHdr{Flags: VNetNeedsCsum, HdrLen: uint16(p.hdrEnd), CsumStart: uint16(p.l4), CsumOffset: 16}
	if n > 1 {
		vh.GSOType, vh.GSOSize = GSOTCPv4, uint16(mss)
		if p.v6 {
			vh.GSOType = GSOTCPv6
		}
		if f&tcpCWR != 0 {
			vh.GSOType |= GSOECN
		}
	}
	return vh, h, payload
}

// TCP reports whether the plan cuts a TCP super-frame.
func (sp Super) TCP() bool { return sp.Segs > 0 && sp.p.proto == protoTCP }
