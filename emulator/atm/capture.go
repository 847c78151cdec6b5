package atm

import (
	"encoding/binary"
	"slices"
	"time"

	"github.com/atmlab/atmlab/cells"
	"github.com/atmlab/atmlab/emulator"
)

// LinkTypeERF is the pcap link type of Endace ERF records (atm.md §9):
// Wireshark decodes ERF type 4 records as AAL5 PDUs and checks their CRC.
const LinkTypeERF = 197

// LinkTypeSunATM is the pcap link type of SunATM records: a 4-octet
// pseudo-header (direction and traffic type, VPI, VCI) before an AAL5 PDU.
// A VC-mux PDU is captured so: Wireshark guesses an ERF AAL5 record that
// has no LLC/SNAP header to be LANE ("Malformed Packet"), but decodes a
// SunATM record of traffic type "raw" by its content, VC-muxed IP as IP.
const LinkTypeSunATM = 123

// ERF record types and header (atm.md §9.3).
const (
	erfHeader  = 16
	erfATMCell = 3 // a cell without its HEC: 4 header octets + 48
	erfAAL5    = 4 // the first cell's 4 header octets + the whole CPCS-PDU
	erfVarLen  = 0x04
	maxPDU     = (cells.MaxAAL5SDU/cells.PayloadSize + 2) * cells.PayloadSize
)

// Tap captures one direction of a cell link as ERF records for `atmlab
// capture`: reassembled AAL5 PDUs with their pad and trailer as received, so
// Wireshark checks each CRC (a PDU that lost a cell shows as incorrect), or
// with Cells set every cell on its own. It implements emulator.Tapper; the
// records reach the tap function as a Frame's Data, their ERF timestamp
// left for the writer to fill (PutERFTime), and Iface (0..3) marks the
// direction.
type Tap struct {
	link  *CellLink
	Cells bool
	// SunATM writes PDUs as SunATM records (LinkTypeSunATM) instead of
	// ERF: the PDU, pad and trailer follow the pseudo-header as received,
	// and Wireshark decodes the packet inside without checking the CRC.
	SunATM bool
	Iface  byte
	fn     func(f *emulator.Frame, at time.Duration)
	pdus   map[uint32][]byte // PDU in progress by VPI/VCI, starting with its ATM header
}

var _ emulator.Tapper = (*Tap)(nil)

// NewTap returns a capture point on l.
func (l *CellLink) NewTap(cellMode bool, iface byte) *Tap {
	return &Tap{link: l, Cells: cellMode, Iface: iface}
}

// SetTap implements emulator.Tapper.
func (t *Tap) SetTap(fn func(f *emulator.Frame, at time.Duration)) {
	t.fn, t.pdus = fn, map[uint32][]byte{}
	t.link.taps = slices.DeleteFunc(t.link.taps, func(o *Tap) bool { return o == t })
	if fn != nil {
		t.link.taps = append(t.link.taps, t)
	}
}

func (t *Tap) see(c *cells.Cell, at time.Duration) {
	if t.Cells {
		rec := t.record(erfATMCell, 4+cells.PayloadSize)
		rec = append(append(rec, c[:4]...), c[cells.HeaderSize:]...)
		t.fn(&emulator.Frame{Data: rec}, at)
		return
	}
	vc := binary.BigEndian.Uint32(c[:4]) &^ 0xF // VPI/VCI, without PTI and CLP
	buf := t.pdus[vc]
	if len(buf) == 0 {
		buf = append(buf, c[:4]...)
	}
	if len(buf) < 4+maxPDU {
		buf = append(buf, c.Payload()...)
	}
	if !c.LastOfPDU() {
		t.pdus[vc] = buf
		return
	}
	delete(t.pdus, vc)
	if t.SunATM {
		t.fn(&emulator.Frame{Data: sunATM(buf, t.Iface)}, at)
		return
	}
	rec := append(t.record(erfAAL5, len(buf)), buf...)
	t.fn(&emulator.Frame{Data: rec}, at)
}

// sunATM turns a PDU that starts with its first cell's header into a
// SunATM record: direction (0x80 for the second direction) and traffic
// type 0 ("raw", decoded by content), the VPI's low 8 bits, the VCI.
func sunATM(buf []byte, iface byte) []byte {
	h := binary.BigEndian.Uint32(buf)
	rec := make([]byte, 4, len(buf))
	rec[0] = (iface & 1) << 7
	rec[1] = byte(h >> 20)
	binary.BigEndian.PutUint16(rec[2:], uint16(h>>4))
	return append(rec, buf[4:]...)
}

// record returns an ERF header for a body of n octets.
func (t *Tap) record(typ byte, n int) []byte {
	rec := make([]byte, erfHeader, erfHeader+n)
	rec[8], rec[9] = typ, erfVarLen|t.Iface&3
	binary.BigEndian.PutUint16(rec[10:], uint16(min(erfHeader+n, 0xFFFF)))
	binary.BigEndian.PutUint16(rec[14:], uint16(min(n, 0xFFFF)))
	return rec
}

// PutERFTime writes t into an ERF record's timestamp: 32.32 fixed-point
// seconds, little-endian.
func PutERFTime(rec []byte, t time.Time) {
	frac := uint64(t.Nanosecond()) << 32 / uint64(time.Second)
	binary.LittleEndian.PutUint64(rec, uint64(t.Unix())<<32|frac)
}
