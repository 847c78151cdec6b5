package cells

import (
	"cmp"
	"encoding/binary"
	"errors"
	"time"

	"github.com/atmlab/atmlab/cells/internal/crc"
)

// AAL3/4 constants (ITU-T I.363.3).
const (
	AAL34SegSize  = 44   // CPCS-PDU octets a SAR-PDU carries
	AAL34Overhead = 8    // CPCS header (CPI, Btag, BASize) and trailer (AL, Etag, Length)
	MaxMID        = 1023 // the MID field is 10 bits
)

// AAL3/4 segment types, the SAR-PDU's ST field.
const (
	SegCOM = 0 // continuation of message
	SegEOM = 1 // end of message
	SegBOM = 2 // beginning of message
	SegSSM = 3 // single-segment message
)

// More sentinel errors, for AAL3/4.
var (
	ErrCRC10    = errors.New("cells: AAL3/4 SAR-PDU CRC-10 mismatch")
	ErrSequence = errors.New("cells: AAL3/4 sequence gap (a segment was lost)")
)

// AAL34Cells returns how many cells an n-octet SDU takes:
// ceil((8 + 4*ceil(n/4)) / 44). The sawtooth's period is 44 octets.
func AAL34Cells(n int) int {
	return (AAL34Overhead + (n+3)&^3 + AAL34SegSize - 1) / AAL34SegSize
}

// SegmentAAL34 appends the cells of sdu's AAL3/4 CPCS-PDU to dst. tag is the
// PDU's Btag and Etag (senders change it per PDU), mid its multiplexing
// identifier; sequence numbers start at 0 in the BOM. Each cell carries
// header h. The SDU must be 1..65535 octets.
func SegmentAAL34(dst []Cell, sdu []byte, tag byte, mid uint16, h Header, f Format) ([]Cell, error) {
	if len(sdu) == 0 || len(sdu) > MaxAAL5SDU || mid > MaxMID {
		return dst, ErrLength
	}
	var head [4]byte
	head[1] = tag // CPI 0: lengths count octets
	binary.BigEndian.PutUint16(head[2:], uint16(len(sdu)))
	var tailBuf [7]byte // up to 3 pad octets, AL, Etag, Length
	tailBuf[4] = tag
	binary.BigEndian.PutUint16(tailBuf[5:], uint16(len(sdu)))
	pad := (4 - len(sdu)%4) % 4
	parts := [3][]byte{head[:], sdu, tailBuf[3-pad:]}
	part := 0

	n := AAL34Cells(len(sdu))
	for i := range n {
		st := SegCOM
		switch {
		case n == 1:
			st = SegSSM
		case i == 0:
			st = SegBOM
		case i == n-1:
			st = SegEOM
		}
		var c Cell
		hh := h
		hh.PTI &^= 1
		hh.Put(c[:], f)
		p := c[HeaderSize:]
		binary.BigEndian.PutUint16(p, uint16(st)<<14|uint16(i&0xF)<<10|mid)
		li := 0
		for li < AAL34SegSize && part < len(parts) {
			k := copy(p[2+li:2+AAL34SegSize], parts[part])
			li += k
			parts[part] = parts[part][k:]
			if len(parts[part]) == 0 {
				part++
			}
		}
		binary.BigEndian.PutUint16(p[46:], uint16(li)<<10)
		binary.BigEndian.PutUint16(p[46:], uint16(li)<<10|crc.CRC10SAR(p))
		dst = append(dst, c)
	}
	return dst, nil
}

// SAR returns an AAL3/4 cell's SAR fields: segment type, sequence number,
// MID and length indicator.
func (c *Cell) SAR() (st, sn int, mid uint16, li int) {
	p := c.Payload()
	w := binary.BigEndian.Uint16(p)
	return int(w >> 14), int(w>>10) & 0xF, w & 0x3FF, int(binary.BigEndian.Uint16(p[46:]) >> 10)
}

// AAL34Reassembler rebuilds AAL3/4 SDUs from the cells of one virtual
// channel, one PDU in progress per MID, as I.363.3's message mode does. Not
// safe for concurrent use; the clock is the caller's.
type AAL34Reassembler struct {
	MaxSDU  int           // 0 means 65535
	Timeout time.Duration // 0 means none

	mids map[uint16]*aal34PDU
}

type aal34PDU struct {
	buf    []byte
	next   int // expected sequence number
	first  time.Duration
	active bool
	drop   bool // overflowed: discard to its EOM
	skip   bool // a PDU was aborted: drop its remaining segments quietly
}

// Push adds one cell received at now. When the cell ends a PDU it returns
// the SDU (valid until the next Push for the same MID) and done. A cell
// whose CRC-10 fails is discarded (ErrCRC10); a segment out of sequence
// aborts its PDU (ErrSequence); a PDU whose CPCS fields disagree is
// discarded (ErrLength), as is one over MaxSDU (ErrTooLong) or one whose
// segments stopped coming for Timeout (ErrTimeout, reported with the next
// cell of its MID).
func (r *AAL34Reassembler) Push(c *Cell, now time.Duration) (sdu []byte, done bool, err error) {
	p := c.Payload()
	if crc.CRC10SAR(p) != 0 {
		return nil, false, ErrCRC10
	}
	st, sn, mid, li := c.SAR()
	if r.mids == nil {
		r.mids = map[uint16]*aal34PDU{}
	}
	s := r.mids[mid]
	if s == nil {
		s = &aal34PDU{}
		r.mids[mid] = s
	}
	if s.active && r.Timeout > 0 && now-s.first > r.Timeout {
		s.active, s.skip = false, true
		err = ErrTimeout
	}
	switch st {
	case SegBOM, SegSSM:
		if s.active {
			err = ErrSequence // the previous PDU lost its EOM
		}
		*s = aal34PDU{buf: s.buf[:0], next: sn, first: now, active: true}
	default:
		if !s.active {
			// The rest of a PDU already reported lost is dropped quietly.
			if s.skip {
				s.skip = st != SegEOM
				return nil, false, err
			}
			s.skip = st != SegEOM
			return nil, false, cmp.Or(err, ErrSequence)
		}
		if sn != s.next {
			s.active, s.skip = false, st != SegEOM
			return nil, false, ErrSequence
		}
	}
	s.next = (sn + 1) & 0xF
	s.skip = false
	bad := li > AAL34SegSize || (st == SegBOM || st == SegCOM) && li != AAL34SegSize || (st == SegEOM && li < 4) || (st == SegSSM && li < 12)
	if bad {
		s.active, s.skip = false, st == SegBOM || st == SegCOM
		return nil, false, ErrLength
	}
	maxSDU := r.MaxSDU
	if maxSDU == 0 {
		maxSDU = MaxAAL5SDU
	}
	if len(s.buf)+li > AAL34Overhead+maxSDU+3 {
		s.drop = true
	}
	if !s.drop {
		s.buf = append(s.buf, p[2:2+li]...)
	}
	if st == SegBOM || st == SegCOM {
		return nil, false, err
	}
	s.active = false
	if s.drop {
		return nil, false, ErrTooLong
	}
	b := s.buf
	length := int(binary.BigEndian.Uint16(b[len(b)-2:]))
	if b[0] != 0 || b[1] != b[len(b)-3] || b[len(b)-4] != 0 || length == 0 ||
		int(binary.BigEndian.Uint16(b[2:])) != length || len(b) != AAL34Overhead+(length+3)&^3 {
		return nil, false, ErrLength
	}
	if length > maxSDU {
		return nil, false, ErrTooLong
	}
	return b[4 : 4+length], true, err
}
