package cells

import (
	"encoding/binary"
	"time"

	"github.com/atmlab/atmlab/cells/internal/crc"
)

// AAL5Cells returns how many cells an n-octet SDU takes: ceil((n+8)/48).
// An SDU of 48k+40 octets fills k+1 cells exactly; one more octet costs a cell.
func AAL5Cells(n int) int { return (n + AAL5Trailer + PayloadSize - 1) / PayloadSize }

// SegmentAAL5 appends the cells of sdu's AAL5 CPCS-PDU to dst, each with
// header h (PTI bit 0 set on the last) and returns dst. uu is the CPCS-UU
// octet. The SDU must be 1..65535 octets.
func SegmentAAL5(dst []Cell, sdu []byte, uu byte, h Header, f Format) ([]Cell, error) {
	if len(sdu) == 0 || len(sdu) > MaxAAL5SDU {
		return dst, ErrLength
	}
	n := AAL5Cells(len(sdu))
	reg := uint32(0xFFFFFFFF)
	rest := sdu
	for i := range n {
		var c Cell
		last := i == n-1
		hh := h
		hh.PTI &^= 1
		if last {
			hh.PTI |= 1
		}
		hh.Put(c[:], f)
		p := c[HeaderSize:]
		k := copy(p, rest)
		rest = rest[k:]
		if last {
			t := p[PayloadSize-AAL5Trailer:]
			t[0], t[1] = uu, 0
			binary.BigEndian.PutUint16(t[2:], uint16(len(sdu)))
			reg = crc.CRC32Update(reg, p[:PayloadSize-4])
			binary.BigEndian.PutUint32(t[4:], ^reg)
		} else {
			reg = crc.CRC32Update(reg, p)
		}
		dst = append(dst, c)
	}
	return dst, nil
}

// Reassembler rebuilds AAL5 SDUs from the cells of one virtual channel. It
// bounds the PDU it will hold and drops a PDU whose cells stop coming for
// Timeout. Not safe for concurrent use; the clock is the caller's.
type Reassembler struct {
	MaxSDU  int           // 0 means 65535
	Timeout time.Duration // 0 means none

	buf   []byte
	reg   uint32 // running CRC-32 register over buf
	first time.Duration
	drop  bool // the PDU already overflowed: discard to its last cell
}

// Push adds one cell received at now. When the cell ends a PDU it returns
// the SDU (valid until the next Push) and done; a PDU that fails its CRC,
// length or size checks, or timed out, returns the matching sentinel error
// and is discarded, as on hardware.
func (r *Reassembler) Push(c *Cell, now time.Duration) (sdu []byte, done bool, err error) {
	maxSDU := r.MaxSDU
	if maxSDU == 0 {
		maxSDU = MaxAAL5SDU
	}
	if len(r.buf) > 0 && r.Timeout > 0 && now-r.first > r.Timeout {
		r.reset()
		err = ErrTimeout
	}
	if len(r.buf) == 0 {
		r.first, r.reg = now, 0xFFFFFFFF
	}
	p := c.Payload()
	if !r.drop && len(r.buf)+PayloadSize > maxSDU+AAL5Trailer+PayloadSize-1 {
		r.drop = true
	}
	if !r.drop {
		r.buf = append(r.buf, p...)
		r.reg = crc.CRC32Update(r.reg, p)
	}
	if !c.LastOfPDU() {
		return nil, false, err
	}
	defer r.reset()
	if r.drop {
		return nil, false, ErrTooLong
	}
	if r.reg != crc.AAL5Check {
		return nil, false, ErrCRC
	}
	pdu := r.buf
	length := int(binary.BigEndian.Uint16(pdu[len(pdu)-6:]))
	if length == 0 || length > len(pdu)-AAL5Trailer || len(pdu)-AAL5Trailer-length > PayloadSize-1 || pdu[len(pdu)-7] != 0 {
		return nil, false, ErrLength
	}
	if length > maxSDU {
		return nil, false, ErrTooLong
	}
	return pdu[:length], true, err
}

func (r *Reassembler) reset() {
	r.buf, r.drop = r.buf[:0], false
}

// Pending reports whether part of a PDU is held.
func (r *Reassembler) Pending() bool { return len(r.buf) > 0 || r.drop }
