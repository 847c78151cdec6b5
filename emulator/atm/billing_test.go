package atm

import (
	"testing"

	"github.com/atmlab/atmlab/cells"
)

// Billing's known answers (docs/reference.md §5): on OC-3c with AAL5 and
// LLC/SNAP a 1472-octet IP packet (a 1444-byte UDP payload) fills 31 cells
// exactly and one octet more takes 32; AAL3/4's 44-octet segments take 34
// for it; ATM25 bills 54 octet times a cell.
func TestBillingKnownAnswers(t *testing.T) {
	for _, c := range []struct {
		phy         string
		aal         AAL
		encap       cells.Encap
		ip          int
		cells, line int
	}{
		{"oc3", AAL5, cells.LLC, 1472, 31, 31 * 53},
		{"oc3", AAL5, cells.LLC, 1473, 32, 32 * 53},
		{"oc3", AAL5, cells.VCMux, 1480, 31, 31 * 53},
		{"oc3", AAL5, cells.VCMux, 1481, 32, 32 * 53},
		{"oc3", AAL34, cells.LLC, 1472, 34, 34 * 53},
		{"oc3", AAL5, cells.LLC, 9180, 192, 192 * 53},
		{"atm25", AAL5, cells.LLC, 1472, 31, 31 * 54},
		{"e3", AAL34, cells.VCMux, 28, 1, 53},
	} {
		b := Billing{PHYs[c.phy], c.aal, c.encap}
		if got, line := b.Cells(c.ip), b.LineOctets(c.ip); got != c.cells || line != c.line {
			t.Errorf("%s %v %v, %d-octet packet: %d cells, %d line octets; want %d, %d", c.phy, c.aal, c.encap, c.ip, got, line, c.cells, c.line)
		}
		if got := b.FrameCells(14 + c.ip); got != c.cells {
			t.Errorf("%s %v %v: a %d-octet frame takes %d cells, want %d", c.phy, c.aal, c.encap, 14+c.ip, got, c.cells)
		}
	}
}

// Billing agrees with the segmenters the adapters send with, for every
// packet length up to the MTU and beyond, each AAL and encapsulation.
func TestBillingMatchesSegmenters(t *testing.T) {
	b := Billing{PHY: PHYs["oc3"]}
	var sdu []byte
	var segs []cells.Cell
	for _, aal := range []AAL{AAL5, AAL34} {
		for _, encap := range []cells.Encap{cells.LLC, cells.VCMux} {
			b.AAL, b.Encap = aal, encap
			for ip := 1; ip <= 9300; ip++ {
				sdu = encap.Encapsulate(sdu[:0], cells.EtherTypeIPv4, make([]byte, ip))
				var err error
				if aal == AAL34 {
					segs, err = cells.SegmentAAL34(segs[:0], sdu, 1, 0, cells.Header{VCI: 100}, cells.UNI)
				} else {
					segs, err = cells.SegmentAAL5(segs[:0], sdu, 0, cells.Header{VCI: 100}, cells.UNI)
				}
				if err != nil {
					t.Fatal(err)
				}
				if got := b.Cells(ip); got != len(segs) {
					t.Fatalf("%v %v, %d-octet packet: billed %d cells, segmented into %d", aal, encap, ip, got, len(segs))
				}
			}
		}
	}
}
