package atm

import (
	"bytes"
	"encoding/binary"
	"testing"
	"time"

	"github.com/atmlab/atmlab/cells"
	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/emulator/sched"
)

// Through a switch a VC's cells get their new VPI/VCI and a valid HEC, one
// slot later than on a direct link; unmapped cells are dropped and counted;
// VP entries keep the VCI.
func TestSwitchTranslates(t *testing.T) {
	s := sched.New()
	oc3 := LinkConfig{PHY: PHYs["oc3"]}
	sw := NewSwitch(s, "atm1", SwitchConfig{})
	p1, p2 := sw.AddPort("atm1:p1"), sw.AddPort("atm1:p2")
	out := &cellLog{s: s}
	p2.Attach(NewCellLink(s, oc3, out))
	in := NewCellLink(s, oc3, p1)
	sw.MapVC(p1, 0, 100, p2, 5, 200)
	sw.MapVP(p1, 7, p2, 9)

	var c cells.Cell
	send := func(h cells.Header) {
		c.SetHeader(h, cells.UNI)
		in.Send(&c, 0)
	}
	send(cells.Header{VCI: 100, PTI: 1})
	send(cells.Header{VPI: 7, VCI: 33})
	send(cells.Header{VCI: 101})
	s.Run()
	if len(out.cells) != 2 {
		t.Fatalf("%d cells out, want 2", len(out.cells))
	}
	if h := out.cells[0].Header(cells.UNI); h.VPI != 5 || h.VCI != 200 || h.PTI != 1 {
		t.Errorf("VC-switched header %+v", h)
	}
	if h := out.cells[1].Header(cells.UNI); h.VPI != 9 || h.VCI != 33 {
		t.Errorf("VP-switched header %+v", h)
	}
	for _, c := range out.cells {
		if fixed, err := cells.CheckHEC(c[:]); fixed || err != nil {
			t.Errorf("HEC not rewritten: % x", c[:5])
		}
	}
	// Cell 0 leaves the host at slot 0's end and the switch at slot 1's.
	if want := PHYs["oc3"].SlotEnd(1); out.times[0] != want {
		t.Errorf("first cell out at %v, want %v", out.times[0], want)
	}
	rows := sw.Stats()
	if rows[0].ATM.UnknownVC != 1 || rows[0].RxFrames != 3 || rows[1].TxFrames != 2 {
		t.Errorf("stats %+v %+v", rows[0].ATM, rows[1])
	}
	// A single-bit header error is corrected on the way.
	c.SetHeader(cells.Header{VCI: 100}, cells.UNI)
	c[2] ^= 0x08
	in.Send(&c, 0)
	s.Run()
	if len(out.cells) != 3 || sw.Stats()[0].ATM.HECCorrected != 1 {
		t.Errorf("corrected cell: %d out, %+v", len(out.cells), sw.Stats()[0].ATM)
	}
}

// congest sends two hosts' saturating streams of 1500-octet packets, one on
// OC-3c and one on DS-3, into one OC-3c output (21 % overload) and returns
// the far host's packets and the switch's stats. The senders' 1 µs of cable
// keeps their cells off the output's slot grid: in phase with it, a full
// queue takes the OC-3c sender's cell in the very slot another leaves, and
// only the DS-3 sender's cells are dropped.
func congest(t *testing.T, discard Discard) (delivered int, offered int, st emulator.ATMStats) {
	t.Helper()
	s := sched.New()
	oc3 := LinkConfig{PHY: PHYs["oc3"]}
	sw := NewSwitch(s, "atm1", SwitchConfig{QueueCells: 200, Discard: discard})
	p1, p2, p3 := sw.AddPort("p1"), sw.AddPort("p2"), sw.AddPort("p3")
	sink := &frames{s: s}
	rx := NewAdapter(s, AdapterConfig{VCs: []VC{{VCI: 100, Peer: ipA}, {VCI: 101, Peer: ipB}}}, sink)
	rx.Attach(NewCellLink(s, oc3, &cellLog{s: s}))
	p3.Attach(NewCellLink(s, oc3, rx))
	var senders []*Adapter
	for i, p := range []*SwitchPort{p1, p2} {
		a := NewAdapter(s, AdapterConfig{VCs: []VC{{VCI: 100}}}, &frames{s: s})
		a.Attach(NewCellLink(s, LinkConfig{PHY: PHYs[[]string{"oc3", "ds3"}[i]], Propagation: time.Microsecond}, p))
		sw.MapVC(p, 0, 100, p3, 0, uint16(100+i))
		senders = append(senders, a)
	}
	const n = 400
	for _, a := range senders {
		sent := 0
		fill := func() {
			for sent < n && !a.Full(0) {
				a.Send(&emulator.Frame{Data: ipFrame(macB, macA, ipA, ipB, 1500, byte(sent))})
				sent++
			}
		}
		a.SetOnSpace(fill)
		fill()
	}
	s.Run()
	for _, f := range sink.got {
		if len(f) != 1514 {
			t.Fatalf("a damaged packet was delivered")
		}
	}
	return len(sink.got), 2 * n, *sw.Stats()[2].ATM
}

// Two senders into one output: without a discard policy most PDUs lose a
// cell and the link carries garbage; PPD saves some; EPD delivers nearly a
// link's worth of whole packets (Floyd & Romanow).
func TestDiscardPolicies(t *testing.T) {
	none, offered, stNone := congest(t, DiscardNone)
	ppd, _, stPPD := congest(t, PPD)
	epd, _, stEPD := congest(t, EPD)
	t.Logf("of %d packets: none %d, PPD %d, EPD %d delivered", offered, none, ppd, epd)
	if stNone.QueueDrops == 0 || stPPD.PPDDrops == 0 || stEPD.EPDDrops == 0 {
		t.Errorf("drops: none %+v ppd %+v epd %+v", stNone, stPPD, stEPD)
	}
	if !(none < ppd && ppd < epd) {
		t.Errorf("delivered: none %d, PPD %d, EPD %d; want none < PPD < EPD", none, ppd, epd)
	}
	// EPD keeps the output busy with whole packets: at least 90 % of what
	// the output can carry (353 207 of 449 207 cells/s offered).
	if epd < offered*353*90/449/100 {
		t.Errorf("EPD delivered %d of %d", epd, offered)
	}
}

// A capture tap makes one ERF type 4 record per AAL5 PDU, pad and trailer
// included, or one type 3 record per cell.
func TestTap(t *testing.T) {
	s, a, _, _, _ := pair(t, "oc3", AAL5, cells.LLC, LinkConfig{})
	var pdus, cellRecs [][]byte
	a.out.NewTap(false, 1).SetTap(func(f *emulator.Frame, _ time.Duration) { pdus = append(pdus, f.Data) })
	cellTap := a.out.NewTap(true, 0)
	cellTap.SetTap(func(f *emulator.Frame, _ time.Duration) { cellRecs = append(cellRecs, f.Data) })
	a.Send(&emulator.Frame{Data: ipFrame(macB, macA, ipA, ipB, 100, 0)}) // 108-octet SDU: 3 cells
	s.Run()
	if len(pdus) != 1 || len(cellRecs) != 3 {
		t.Fatalf("%d PDU records, %d cell records", len(pdus), len(cellRecs))
	}
	r := pdus[0]
	if r[8] != 4 || r[9] != 0x05 || binary.BigEndian.Uint16(r[10:]) != 16+4+144 || binary.BigEndian.Uint16(r[14:]) != 4+144 {
		t.Errorf("ERF header % x", r[:16])
	}
	if !bytes.Equal(r[16:20], []byte{0, 0, 6, 0x40}) { // VCI 100, PTI of the first cell
		t.Errorf("ATM header % x", r[16:20])
	}
	pdu := r[20:]
	if !bytes.Equal(pdu[:8], []byte{0xAA, 0xAA, 0x03, 0, 0, 0, 0x08, 0x00}) || binary.BigEndian.Uint16(pdu[len(pdu)-6:]) != 108 {
		t.Errorf("PDU % x ... % x", pdu[:8], pdu[len(pdu)-8:])
	}
	if c := cellRecs[2]; c[8] != 3 || len(c) != 16+52 || c[16+3]&0x02 == 0 {
		t.Errorf("last cell record % x", c[:20])
	}
	cellTap.SetTap(nil)
	a.Send(&emulator.Frame{Data: ipFrame(macB, macA, ipA, ipB, 100, 0)})
	s.Run()
	if len(cellRecs) != 3 || len(pdus) != 2 {
		t.Errorf("after removing the cell tap: %d cell, %d PDU records", len(cellRecs), len(pdus))
	}
	rec := make([]byte, 16)
	PutERFTime(rec, time.Unix(3, 500_000_000))
	if binary.LittleEndian.Uint64(rec) != 3<<32|1<<31 {
		t.Errorf("ERF time % x", rec[:8])
	}
}

// A VC-mux tap makes one SunATM record per PDU: direction and traffic type
// "raw", VPI, VCI, then the bare IP packet with its pad and trailer, as an
// ERF tap holds it.
func TestTapSunATM(t *testing.T) {
	s, a, _, _, _ := pair(t, "oc3", AAL5, cells.VCMux, LinkConfig{})
	var recs [][]byte
	var erf []byte
	a.out.NewTap(false, 0).SetTap(func(f *emulator.Frame, _ time.Duration) { erf = f.Data })
	for iface := range byte(2) {
		tap := a.out.NewTap(false, iface)
		tap.SunATM = true
		tap.SetTap(func(f *emulator.Frame, _ time.Duration) { recs = append(recs, f.Data) })
	}
	a.Send(&emulator.Frame{Data: ipFrame(macB, macA, ipA, ipB, 100, 0)}) // 100-octet SDU: 3 cells
	s.Run()
	if len(recs) != 2 {
		t.Fatalf("%d records, want 2", len(recs))
	}
	for i, r := range recs {
		if want := []byte{byte(i) << 7, 0, 0, 100}; !bytes.Equal(r[:4], want) {
			t.Errorf("record %d pseudo-header % x, want % x", i, r[:4], want)
		}
		pdu := r[4:]
		if len(pdu) != 144 || pdu[0] != 0x45 || binary.BigEndian.Uint16(pdu[len(pdu)-6:]) != 100 {
			t.Errorf("record %d: %d octets, % x ... % x", i, len(pdu), pdu[:4], pdu[len(pdu)-8:])
		}
		if !bytes.Equal(pdu, erf[20:]) {
			t.Errorf("record %d: the PDU differs from the ERF record's", i)
		}
	}
}

// BenchmarkSwitchCells measures the emulator's cells per CPU second through
// an atm-switch (host adapter, link, switch, link, host adapter, OC-12c) in
// virtual time, beside the OC-12c cell rate (1 412 830 cells/s), in trains
// and stepped cell by cell.
func BenchmarkSwitchCells(b *testing.B) {
	for _, mode := range []struct {
		name    string
		perCell bool
	}{{"trains", false}, {"per-cell", true}} {
		b.Run(mode.name, func(b *testing.B) { benchSwitchCells(b, mode.perCell) })
	}
}

func benchSwitchCells(b *testing.B, perCell bool) {
	s := sched.New()
	oc12 := LinkConfig{PHY: PHYs["oc12"], PerCell: perCell}
	sw := NewSwitch(s, "atm1", SwitchConfig{})
	p1, p2 := sw.AddPort("p1"), sw.AddPort("p2")
	// The host releases what it is handed, as the kernel's TAP writer does.
	rx := NewAdapter(s, AdapterConfig{VCs: []VC{{VCI: 100}}, MaxSDU: 9188}, recvFunc(func(f *emulator.Frame) { f.Release() }))
	rx.Attach(NewCellLink(s, oc12, &cellLog{s: s}))
	p2.Attach(NewCellLink(s, oc12, rx))
	tx := NewAdapter(s, AdapterConfig{VCs: []VC{{VCI: 100}}}, &frames{s: s})
	tx.Attach(NewCellLink(s, oc12, p1))
	sw.MapVC(p1, 0, 100, p2, 0, 100)
	frame := &emulator.Frame{Data: ipFrame(macB, macA, ipA, ipB, 9180, 0)}
	b.ReportAllocs()
	start := time.Now()
	for b.Loop() {
		tx.Send(frame)
		s.Run()
	}
	cellsPerSec := float64(sw.Stats()[1].TxFrames) / time.Since(start).Seconds()
	b.ReportMetric(cellsPerSec, "cells/s")
	b.ReportMetric(cellsPerSec/PHYs["oc12"].CellRate(), "x_oc12")
}
