package emulator

import (
	"testing"

	"github.com/atmlab/atmlab/emulator/sched"
	"github.com/atmlab/atmlab/emulator/units"
)

// BenchmarkChannel measures the model's cost per frame through one link
// direction in virtual time (queue, transmitter, delivery).
func BenchmarkChannel(b *testing.B) {
	s := sched.New()
	ch := NewChannel(s, ChannelConfig{Rate: units.Gbps}, ReceiverFunc(func(*Frame) {}))
	f := frame(1, 1514)
	b.SetBytes(1514)
	b.ReportAllocs()
	for b.Loop() {
		ch.Send(f)
		s.Run()
	}
}
