package devices

import (
	"bytes"
	"encoding/binary"
	"net/netip"
	"testing"

	"github.com/atmlab/atmlab/cells/native"
	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/emulator/sched"
	. "github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/labfile"
)

const nativeLab = `
name: nat
topology:
  nodes:
    h1: {kind: host, ipv4: 10.0.0.1/24}
    h2: {kind: host, ipv4: 10.0.0.2/24}
    h3: {kind: host, ipv4: 10.0.0.3/24}
    asx: {kind: atm-switch}
  links:
    - {endpoints: ["h1:eth0", "asx:p1"], atm: {phy: oc3, native: true}}
    - {endpoints: ["h2:eth0", "asx:p2"], atm: {phy: oc3, native: true}}
    - {endpoints: ["h3:eth0", "asx:p3"], atm: {phy: oc3}}
`

// nativeFrame is a host's native AAL frame for VC vpi/vci with an SDU of n
// octets (each octet its index).
func nativeFrame(vpi, vci uint16, n int) *emulator.Frame {
	sdu := make([]byte, n)
	for i := range sdu {
		sdu[i] = byte(i)
	}
	d := make([]byte, 14, 14+native.HeaderLen+n)
	d[6] = 0x02
	binary.BigEndian.PutUint16(d[12:], native.EtherType)
	d, _ = native.Append(d, vpi, vci, sdu)
	return &emulator.Frame{Data: d}
}

// Hosts whose links say native: true get a native PVC to each other
// beside their Classical IP ones, planned after them on the same links
// (h1: 0/100 IP to h2, 0/101 native to h2, 0/102 IP to h3); a host
// without it gets none.
func TestNativePVCsArePlannedBesideClassicalIP(t *testing.T) {
	lab, err := labfile.Parse("nat.yaml", []byte(nativeLab))
	if err != nil {
		t.Fatal(err)
	}
	h1 := lab.Node("h1").Interface("eth0").VCs
	want := []VC{{VPI: 0, VCI: 100, Peer: addr("10.0.0.2")}, {VPI: 0, VCI: 101, Peer: addr("10.0.0.2"), Native: true}, {VPI: 0, VCI: 102, Peer: addr("10.0.0.3")}}
	if len(h1) != len(want) {
		t.Fatalf("h1's VCs = %+v, want %+v", h1, want)
	}
	for i := range want {
		if h1[i] != want[i] {
			t.Errorf("h1's VC %d = %+v, want %+v", i, h1[i], want[i])
		}
	}
	for _, vc := range lab.Node("h3").Interface("eth0").VCs {
		if vc.Native {
			t.Errorf("h3, whose link is not native, has a native VC %+v", vc)
		}
	}
}

// An SDU sent on a native VC crosses the switch as one AAL5 PDU in exactly
// its cells, with no encapsulation (n*48+40 octets fill n+1 cells, one
// octet more takes another), and reaches the far host whole in a native
// frame from its own end of the VC.
func TestNativeSDUCrossesInExactCells(t *testing.T) {
	for _, tt := range []struct {
		sdu, cells int
	}{{952, 20}, {953, 21}, {9160, 191}, {9161, 192}, {1, 1}, {40, 1}, {41, 2}} {
		lab, err := labfile.Parse("nat.yaml", []byte(nativeLab))
		if err != nil {
			t.Fatal(err)
		}
		s := sched.New()
		n := Build(lab, s)
		var got []*emulator.Frame
		n.Hosts["h2:eth0"].Sink = func(f *emulator.Frame) { got = append(got, f) }
		n.Hosts["h1:eth0"].Input(nativeFrame(0, 101, tt.sdu))
		s.Run()
		if len(got) != 1 {
			t.Fatalf("SDU of %d: h2 got %d frames, want 1", tt.sdu, len(got))
		}
		d := got[0].Data
		if et := binary.BigEndian.Uint16(d[12:]); et != native.EtherType {
			t.Fatalf("SDU of %d: h2 got EtherType %#x, want %#x", tt.sdu, et, native.EtherType)
		}
		h, sdu, err := native.Parse(d[14:])
		if err != nil || h.VPI != 0 || h.VCI != 101 || !bytes.Equal(sdu, nativeFrame(0, 0, tt.sdu).Data[14+native.HeaderLen:]) {
			t.Errorf("SDU of %d: h2 got %+v, %d octets, %v; want 0/101 and the SDU as sent", tt.sdu, h, len(sdu), err)
		}
		for _, r := range n.Stats() {
			if r.Port == "asx:p2" && r.TxFrames != uint64(tt.cells) {
				t.Errorf("SDU of %d: asx:p2 sent %d cells, want %d", tt.sdu, r.TxFrames, tt.cells)
			}
		}
	}
}

// A native frame for a VC that is not native (or not there), or whose
// header does not parse, is dropped and counted; nothing reaches the far
// host.
func TestNativeFrameOnWrongVCIsCounted(t *testing.T) {
	lab, err := labfile.Parse("nat.yaml", []byte(nativeLab))
	if err != nil {
		t.Fatal(err)
	}
	s := sched.New()
	n := Build(lab, s)
	got := 0
	n.Hosts["h2:eth0"].Sink = func(*emulator.Frame) { got++ }
	h1 := n.Hosts["h1:eth0"]
	h1.Input(nativeFrame(0, 100, 100)) // Classical IP's VC
	h1.Input(nativeFrame(0, 999, 100)) // no such VC
	bad := nativeFrame(0, 101, 100)
	bad.Data[14] = 9 // version 9
	h1.Input(bad)
	s.Run()
	if got != 0 {
		t.Errorf("h2 got %d frames, want none", got)
	}
	for _, r := range n.Stats() {
		if r.Port == "h1:eth0" {
			if r.ATM == nil || r.ATM.NoVC != 2 || r.ATM.BadNative != 1 {
				t.Errorf("h1's adapter counted %+v, want no_vc 2, bad_native 1", r.ATM)
			}
		}
	}
}

func addr(s string) netip.Addr { return netip.MustParseAddr(s) }
