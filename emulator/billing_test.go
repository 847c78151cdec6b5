package emulator

import "testing"

// EtherWire's known answers (IEEE 802.3): the minimum frame, a full
// 1500-byte packet, a VLAN-tagged one, a jumbo; and the ceiling a 1472-byte
// UDP payload gets from it on 1G: 1472 of 1538 octets, 957.09 Mbit/s.
func TestEtherWire(t *testing.T) {
	for _, c := range []struct{ n, wire, frame int }{
		{0, 84, 64},
		{42, 84, 64}, // an ARP request: padded
		{60, 84, 64},
		{61, 85, 65},
		{1514, 1538, 1518},
		{1514 + EtherTag, 1542, 1522}, // 802.1Q-tagged
		{9014, 9038, 9018},
	} {
		if got := EtherWire(c.n); got != c.wire {
			t.Errorf("EtherWire(%d) = %d, want %d", c.n, got, c.wire)
		}
		if got := EtherFrame(c.n); got != c.frame {
			t.Errorf("EtherFrame(%d) = %d, want %d", c.n, got, c.frame)
		}
		if total, gap := (Ethernet{}).WireBytes(c.n); total != c.wire || gap != EtherIFG {
			t.Errorf("Ethernet.WireBytes(%d) = %d, %d", c.n, total, gap)
		}
		if got := EtherPreamble + EtherFrame(c.n) + EtherIFG; got != c.wire {
			t.Errorf("preamble + frame + gap at %d = %d, want %d", c.n, got, c.wire)
		}
	}
	payload := 1472
	if got := 1e9 * float64(payload) / float64(EtherWire(EtherHeader+20+8+payload)); got < 957.087e6 || got > 957.088e6 {
		t.Errorf("1472-byte UDP on 1G: %.0f bit/s of payload, want 957.087 Mbit/s", got)
	}
}
