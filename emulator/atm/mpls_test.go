package atm

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/atmlab/atmlab/cells"
	"github.com/atmlab/atmlab/emulator"
)

// A labelled frame (EtherType 0x8847) crosses an LLC/SNAP PVC as a routed
// PDU of that EtherType, label stack and packet intact: its 4 octets make
// a 128-octet packet 4 cells instead of 3 (LLC/SNAP 8 + 4 + 128 + the
// trailer's 8 = 148 > 144). On a VC-mux PVC, which tells IP by its version nibble only, it is
// refused and counted as not IP.
func TestAdapterCarriesMPLS(t *testing.T) {
	s, a, _, _, hb := pair(t, "oc3", AAL5, cells.LLC, LinkConfig{})
	vc := VCMAC(0, 100)
	f := ipFrame(vc[:], macA, ipA, ipB, 128, 1)
	labelled := append(append(append([]byte{}, f[:14]...), 0x00, 0x01, 0x11, 0x3f), f[14:]...) // label 17, S, TTL 63
	binary.BigEndian.PutUint16(labelled[12:], cells.EtherTypeMPLS)
	if !a.Send(&emulator.Frame{Data: labelled}) {
		t.Fatal("LLC/SNAP adapter refused a labelled frame")
	}
	s.Run()
	if len(hb.got) != 1 || binary.BigEndian.Uint16(hb.got[0][12:]) != cells.EtherTypeMPLS || !bytes.Equal(hb.got[0][14:], labelled[14:]) {
		t.Fatalf("far end got %d frames, want the labelled one whole", len(hb.got))
	}
	if c := a.ATM().TxCells; c != 4 {
		t.Errorf("a 128-octet packet with a label took %d cells, want 4", c)
	}

	_, v, _, _, _ := pair(t, "oc3", AAL5, cells.VCMux, LinkConfig{})
	if v.Send(&emulator.Frame{Data: labelled}) || v.ATM().NotIP != 1 {
		t.Errorf("VC-mux adapter took a labelled frame (not-IP count %d)", v.ATM().NotIP)
	}
}
