package atm

import (
	"testing"

	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/emulator/internal/allocs"
	"github.com/atmlab/atmlab/emulator/sched"
)

// A packet from a pool crosses host adapter, link, atm-switch, link and
// host adapter (OC-12c, AAL5, 9180 octets: 192 cells) to a host that
// releases what it is handed, as the kernel's TAP writer does: after the
// first, no PDU allocates anything, in trains and cell by cell. The
// sending adapter releases the frame once its cells are made; the
// receiving one delivers the reassembled packet in a frame of its pool.
func TestPDUAllocations(t *testing.T) {
	for _, perCell := range []bool{false, true} {
		s := sched.New()
		oc12 := LinkConfig{PHY: PHYs["oc12"], PerCell: perCell}
		sw := NewSwitch(s, "atm1", SwitchConfig{})
		p1, p2 := sw.AddPort("p1"), sw.AddPort("p2")
		var got, pooled int
		rx := NewAdapter(s, AdapterConfig{VCs: []VC{{VCI: 100}}, MaxSDU: 9188}, recvFunc(func(f *emulator.Frame) {
			got++
			if f.Pooled() {
				pooled++
			}
			f.Release()
		}))
		rx.Attach(NewCellLink(s, oc12, &cellLog{s: s}))
		p2.Attach(NewCellLink(s, oc12, rx))
		tx := NewAdapter(s, AdapterConfig{VCs: []VC{{VCI: 100}}}, &frames{s: s})
		tx.Attach(NewCellLink(s, oc12, p1))
		sw.MapVC(p1, 0, 100, p2, 0, 100)
		pdu := ipFrame(macB, macA, ipA, ipB, 9180, 0)
		var pool emulator.Pool
		send := func() {
			f := pool.Get(len(pdu))
			copy(f.Data, pdu)
			if !tx.Send(f) {
				t.Fatal("the adapter refused the PDU")
			}
			s.Run()
		}
		for range 1000 { // the rings and the pool grown
			send()
		}
		const runs = 100
		if n := allocs.Count(runs, send); n != 0 {
			t.Errorf("per-cell %v: %v allocations in %d 9180-octet PDUs through an atm-switch: want 0", perCell, n, runs)
		}
		if got != 2*allocs.Tries*runs+1000 || pooled != got {
			t.Errorf("per-cell %v: %d packets delivered, %d of them pooled: want %d, all", perCell, got, pooled, 2*allocs.Tries*runs+1000)
		}
	}
}
