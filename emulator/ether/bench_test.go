package ether

import (
	"testing"

	"github.com/atmlab/atmlab/emulator/units"
)

// BenchmarkSwitchHop measures the model's cost per frame from one host
// through a learning switch to another, in virtual time.
func BenchmarkSwitchHop(b *testing.B) {
	s, _, h := lab(2, units.Gbps, DefaultBuffer)
	h[1].Sink = nil
	h[0].Sink = nil
	h[1].Input(ethFrame(0, broadcast, mac(2), 60)) // learn h2
	s.Run()
	f := ethFrame(1, mac(2), mac(1), 1514)
	b.SetBytes(1514)
	b.ReportAllocs()
	for b.Loop() {
		h[0].Input(f)
		s.Run()
	}
}
