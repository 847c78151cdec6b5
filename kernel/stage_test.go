package kernel

import (
	"testing"
	"time"

	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/emulator/units"
)

// dateBack moves each frame of a batch to the latest time the bucket lets
// it have entered the TAP: at 100M a 1514-octet frame bills 1538 octets,
// 123.04 µs; the last three (the burst) keep their pass.
func TestDateBack(t *testing.T) {
	const pass, end = 50 * time.Millisecond, 50*time.Millisecond + 10*time.Microsecond
	const wire = 123040 * time.Nanosecond
	b := &bucket{rate: 100 * units.Mbps, burst: 3 * 1538, frame: 1538, cost: func(n int) int { return n + 24 }}
	cases := []struct {
		name   string
		before time.Duration // the Born of a frame staged ahead of the batch (0: none)
		floor  time.Duration
		want   []time.Duration
	}{
		{"free", 0, 0, []time.Duration{
			end - 3*wire + bucketSlack, end - 2*wire + bucketSlack, end - wire + bucketSlack, pass, pass, pass}},
		{"floor", 0, end - 2*wire - time.Microsecond, []time.Duration{
			end - 2*wire - time.Microsecond, end - 2*wire + bucketSlack, end - wire + bucketSlack, pass, pass, pass}},
		{"staged ahead", end - 2*wire, 0, []time.Duration{
			end - 2*wire, end - 2*wire + bucketSlack, end - wire + bucketSlack, pass, pass, pass}},
	}
	for _, c := range cases {
		var s stage
		if c.before > 0 {
			s.push(&emulator.Frame{Data: make([]byte, 1514), Born: c.before})
		}
		for range 6 {
			s.push(&emulator.Frame{Data: make([]byte, 1514), Born: pass})
		}
		s.dateBack(6, end, c.floor, b)
		if c.before > 0 {
			s.pop()
		}
		for i, want := range c.want {
			if got := s.pop().Born; got != want {
				t.Errorf("%s: frame %d dated %v, want %v", c.name, i, got, want)
			}
		}
	}
}
