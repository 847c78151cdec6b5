package vhost

import (
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/emulator/sched"
	"github.com/atmlab/atmlab/emulator/units"
)

// build makes one host, h2, with one interface on a 100M link to a port
// that takes what it sends.
func build(t *testing.T, seed uint64) *Lab {
	t.Helper()
	s := sched.New()
	port, peer := &emulator.HostPort{Name: "h2:eth0"}, &emulator.HostPort{Name: "sw:p1"}
	cc := emulator.ChannelConfig{Rate: 100 * units.Mbps, QueueFrames: 64}
	emulator.Connect(s, port, peer, cc, cc)
	peer.Sink = func(*emulator.Frame) {}
	l, err := New(s, seed, []Spec{{Name: "h2", Where: "test.yaml:1", Settings: Defaults(),
		NICs: []NIC{{Name: "eth0", Port: port, MTU: 1500, MAC: "\x02\x00\x00\x00\x00\x02", Addr: netip.MustParsePrefix("10.0.0.2/24")}}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	return l
}

// Each frame a host receives enters its stack after a delay drawn from
// [0, Jitter) by the host's seeded generator, never before the frame
// ahead of it: the same seed draws the same delays, another seed others,
// and Jitter 0 hands frames over at once.
func TestJitter(t *testing.T) {
	draws := func(seed int, jitter time.Duration) []time.Duration {
		l := build(t, uint64(seed))
		h := l.Hosts["h2"]
		if h.Settings.Jitter != DefaultJitter {
			t.Fatalf("settings record jitter %v, want %v", h.Settings.Jitter, DefaultJitter)
		}
		h.Settings.Jitter = jitter
		c := h.nics[0]
		var out []time.Duration
		for i := range 200 {
			l.Sched.RunUntil(time.Duration(i/4) * 5 * time.Microsecond) // four frames an instant, 5 µs apart
			prev := c.last
			at := c.entry()
			now := l.Sched.Now()
			if at < now || at < prev || at != prev && at != now && at >= now+jitter {
				t.Fatalf("seed %d frame %d at %v enters at %v (jitter %v, the frame ahead at %v)", seed, i, now, at, jitter, prev)
			}
			out = append(out, at-now)
		}
		return out
	}
	a, b, other := draws(1, DefaultJitter), draws(1, DefaultJitter), draws(2, DefaultJitter)
	if fmt.Sprint(a) != fmt.Sprint(b) || fmt.Sprint(a) == fmt.Sprint(other) {
		t.Errorf("seed 1 twice and seed 2:\n%v\n%v\n%v", a, b, other)
	}
	t.Logf("delays of seed 1: %v ...", a[:8])
	for _, d := range draws(1, 0) {
		if d != 0 {
			t.Fatalf("jitter 0: a frame waited %v", d)
		}
	}
}
