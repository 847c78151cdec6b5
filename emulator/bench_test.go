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

// BenchmarkHostSegments measures a super-frame's 45 segments waiting in
// the host's pending queue for a NIC ring of 4 and crossing a 1G link: the
// queue's cost per segment beside the channel's.
func BenchmarkHostSegments(b *testing.B) {
	s := sched.New()
	cc := ChannelConfig{Rate: units.Gbps, QueueFrames: 4}
	a, z := &HostPort{Name: "a"}, &HostPort{Name: "z"}
	Connect(s, a, z, cc, cc)
	got := 0
	z.Sink = func(*Frame) { got++ }
	a.SetOnSpace(func() {}) // the ring's space takes the pending segments
	fs := make([]*Frame, 45)
	for i := range fs {
		fs[i] = frame(1, 1514)
	}
	b.SetBytes(45 * 1514)
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		a.InputSegments(fs)
		s.Run()
		n++
	}
	if got != 45*n {
		b.Fatalf("%d segments arrived, want %d", got, 45*n)
	}
}
