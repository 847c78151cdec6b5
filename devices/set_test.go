package devices

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/emulator/atm"
	"github.com/atmlab/atmlab/emulator/sched"
	"github.com/atmlab/atmlab/emulator/units"
	"github.com/atmlab/atmlab/topologies/labfile"
	"github.com/atmlab/atmlab/topologies/settings"
)

// echo sends a ping-sized frame from h1 to h2 and back and returns the RTT.
func echo(t *testing.T, n *Network) time.Duration {
	t.Helper()
	h1, h2 := n.Hosts["h1:eth0"], n.Hosts["h2:eth0"]
	mk := func(dst, src byte) *emulator.Frame {
		d := make([]byte, 98)
		d[5], d[11] = dst, src
		return &emulator.Frame{Data: d}
	}
	start := n.Sched.Now()
	var back time.Duration
	h2.Sink = func(*emulator.Frame) { h2.Input(mk(1, 2)) }
	h1.Sink = func(*emulator.Frame) { back = n.Sched.Now() }
	h1.Input(mk(2, 1))
	n.Sched.Run()
	return back - start
}

func TestNetworkSet(t *testing.T) {
	lab, err := labfile.Parse("echo.yaml", []byte(echoLab))
	if err != nil {
		t.Fatal(err)
	}
	n := Build(lab, sched.New())
	const hops = 4 * 8800 * time.Nanosecond // four 102-byte serialisations at 100M
	if rtt := echo(t, n); rtt != 20*time.Millisecond+hops {
		t.Fatalf("RTT from the lab file %v", rtt)
	}
	set := func(e, from string, words ...string) []Applied { t.Helper(); return mustSet(t, n, e, from, words...) }
	a := set("sw1:p1", "", "delay=0")
	if len(a) != 2 || a[0].From.String() != "h1:eth0" || a[0].Before.Impair.Delay != 10*time.Millisecond || a[1].After.Impair.Delay != 0 {
		t.Fatalf("applied %+v", a)
	}
	if rtt := echo(t, n); rtt != hops {
		t.Fatalf("RTT after delay=0: %v, want %v", rtt, hops)
	}
	set("h2:eth0", "sw1:p2", "delay=5ms", "rate=10M")
	// sw1 -> h2 at 10M: 88 µs instead of 8.8.
	if rtt := echo(t, n); rtt != 5*time.Millisecond+hops+88*time.Microsecond-8800 {
		t.Fatalf("RTT after one direction's change: %v", rtt)
	}
	set("h2:eth0", "")
	set("h1:eth0", "")
	if rtt := echo(t, n); rtt != 20*time.Millisecond+hops {
		t.Fatalf("RTT after --reset: %v", rtt)
	}
	if a := set("sw1:p2", "", "buffer=4KiB"); len(a) != 1 || a[0].From.String() != "sw1:p2" || a[0].After.QueueBytes != 4096 || a[0].Before.QueueBytes != 128<<10 {
		t.Fatalf("buffer applied %+v", a)
	}
	if a := set("sw1:p2", "sw1:p2"); a[0].After.QueueBytes != 128<<10 || a[0].After.Rate != 100*units.Mbps {
		t.Fatalf("reset %+v", a[0].After)
	}
	for _, tc := range []struct{ e, from, words, want string }{
		{"h9:eth0", "", "delay=1ms", "no link has endpoint"},
		{"h1:eth0", "h2:eth0", "delay=1ms", "not an end of link"},
		{"h1:eth0", "h1:eth0", "buffer=2KiB", "no switch sends"},
	} {
		c, err := settings.ParseChange(strings.Fields(tc.words))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := n.Set(tc.e, tc.from, c); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Set(%s, %s, %s) = %v, want %q", tc.e, tc.from, tc.words, err, tc.want)
		}
	}
}

func TestParseChange(t *testing.T) {
	c, err := settings.ParseChange([]string{"rate=10M", "delay=20ms", "jitter=1ms", "loss=1%", "limit=100", "buffer=64KiB"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.String(), "rate=10M delay=20ms jitter=1ms loss=1% limit=100 buffer=64KiB"; got != want {
		t.Fatalf("round trip %q, want %q", got, want)
	}
	for _, w := range []string{"delay", "delay=-1ms", "loss=101%", "rate=fast", "colour=red", "limit=-1", "buffer=0"} {
		if _, err := settings.ParseChange([]string{w}); err == nil {
			t.Errorf("settings.ParseChange(%q) took it", w)
		}
	}
}

// TestNetworkSetATM: an ATM link's cell delay and loss change at run time,
// per direction; --reset returns to the lab file's (delay 1ms, loss 0.1%).
func TestNetworkSetATM(t *testing.T) {
	lab, err := labfile.Parse("asx.yaml", []byte(asxLab))
	if err != nil {
		t.Fatal(err)
	}
	s := sched.New()
	n := Build(lab, s)
	var at []time.Duration
	n.Hosts["h3:eth0"].Sink = func(*emulator.Frame) { at = append(at, s.Now()) }
	// One 1000-byte packet h1 -> h3 across both switches: its transit time.
	transit := func() time.Duration {
		t.Helper()
		s.RunFor(time.Second) // an idle line: every run starts alike on the cell clocks
		start := s.Now()
		at = at[:0]
		n.Hosts["h1:eth0"].Input(ipv4(atm.VCMAC(0, 41), "10.0.0.1", "10.0.0.3", 1000))
		s.Run()
		if len(at) != 1 {
			t.Fatalf("h3 got %d packets", len(at))
		}
		return at[0] - start
	}
	set := func(e, from string, words ...string) []Applied { t.Helper(); return mustSet(t, n, e, from, words...) }
	a := set("h3:eth0", "", "loss=0")
	if len(a) != 2 || !a[0].ATM || a[0].Before.Impair.Loss != 0.001 || a[1].After.Impair.Loss != 0 || a[0].After.Rate != 40_704_000 || a[0].After.Impair.Delay != time.Millisecond {
		t.Fatalf("applied %+v", a)
	}
	base := transit()
	// Toward h3 only: 20 ms more on that line, exactly.
	a = set("h3:eth0", "atm2:p2", "delay=21ms")
	if len(a) != 1 || a[0].From.String() != "atm2:p2" || n.Link("h3:eth0").ATM.BA.Config().Delay != 21*time.Millisecond || n.Link("h3:eth0").ATM.AB.Config().Delay != time.Millisecond {
		t.Fatalf("applied %+v", a)
	}
	if d := transit(); d != base+20*time.Millisecond {
		t.Fatalf("transit %v after delay=21ms, want %v", d, base+20*time.Millisecond)
	}
	// Every cell lost toward h3: nothing arrives, and the 22 cells of the
	// packet (1000 + 8 LLC + 8 trailer in 48-octet payloads) are counted.
	set("h3:eth0", "atm2:p2", "loss=100%")
	s.RunFor(time.Second)
	at = at[:0]
	n.Hosts["h1:eth0"].Input(ipv4(atm.VCMAC(0, 41), "10.0.0.1", "10.0.0.3", 1000))
	s.Run()
	if len(at) != 0 || n.Link("h3:eth0").ATM.BA.Stats().LostCells != 22 {
		t.Fatalf("loss=100%%: %d arrived, stats %+v", len(at), n.Link("h3:eth0").ATM.BA.Stats())
	}
	// A delay line of 10 cells toward h3, and 20 ms of delay to fill it:
	// 12 of the packet's 22 cells find it full, and the PDU fails.
	set("h3:eth0", "atm2:p2", "loss=0", "limit=10")
	s.RunFor(time.Second)
	at = at[:0]
	n.Hosts["h1:eth0"].Input(ipv4(atm.VCMAC(0, 41), "10.0.0.1", "10.0.0.3", 1000))
	s.Run()
	if st := n.Link("h3:eth0").ATM.BA.Stats(); len(at) != 0 || st.LimitDrops != 12 || n.Link("h3:eth0").ATM.BA.Config().Limit != 10 {
		t.Fatalf("limit=10: %d arrived, stats %+v", len(at), st)
	}
	a = set("h3:eth0", "")
	for _, d := range a {
		if d.After.Impair.Delay != time.Millisecond || d.After.Impair.Loss != 0.001 || d.After.Impair.Limit != atm.DefaultLimit {
			t.Fatalf("reset %+v", d.After)
		}
	}
	set("h3:eth0", "", "loss=0")
	if d := transit(); d != base {
		t.Fatalf("transit %v after --reset, want %v", d, base)
	}
	for _, tc := range []struct{ e, from, words, want string }{
		{"h3:eth0", "", "rate=10M", "is ATM, whose rate is its PHY's"},
		{"h3:eth0", "", "buffer=2KiB", "is ATM"},
		{"h3:eth0", "h1:eth0", "delay=1ms", "not an end of link"},
	} {
		c, _ := settings.ParseChange(strings.Fields(tc.words))
		if _, err := n.Set(tc.e, tc.from, c); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Set(%s, %s, %s) = %v, want %q", tc.e, tc.from, tc.words, err, tc.want)
		}
	}
}

// mustSet applies atmlab set's words (none: --reset) to endpoint e of n,
// from the sending endpoint from ("" for both directions).
func mustSet(t *testing.T, n *Network, e, from string, words ...string) []Applied {
	t.Helper()
	c, err := settings.ParseChange(words)
	if err != nil {
		t.Fatal(err)
	}
	c.Reset = len(words) == 0
	a, err := n.Set(e, from, c)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// A change with a value outside the lab file's ranges, as the control
// socket's JSON can carry it, is refused whole on Ethernet and ATM links
// alike, and nothing of it is applied: before, rate 0, a negative delay or
// a 500 % loss went into the model as they were, and ping failed.
func TestNetworkSetRefusesOutOfRange(t *testing.T) {
	eth, err := labfile.Parse("echo.yaml", []byte(echoLab))
	if err != nil {
		t.Fatal(err)
	}
	asx, err := labfile.Parse("asx.yaml", []byte(asxLab))
	if err != nil {
		t.Fatal(err)
	}
	ne, na := Build(eth, sched.New()), Build(asx, sched.New())
	rate := func(r units.BitRate) *units.BitRate { return &r }
	dur := func(d time.Duration) *time.Duration { return &d }
	f := func(v float64) *float64 { return &v }
	i := func(v int) *int { return &v }
	size := func(s units.Size) *units.Size { return &s }
	ok := dur(5 * time.Millisecond) // in range: applied only if the whole change is
	for _, tc := range []struct {
		c    settings.Change
		want string
	}{
		{settings.Change{Delay: ok, Rate: rate(0)}, "rate 0 is out of range: a bit rate (k, M, G or a PHY name) from 1k to 1000G"},
		{settings.Change{Delay: ok, Rate: rate(-5)}, "rate -5 is out of range"},
		{settings.Change{Delay: dur(-time.Second)}, "delay -1s is out of range: a duration in Go syntax from 0 to 24h"},
		{settings.Change{Delay: ok, Loss: f(5)}, "loss 500% is out of range: a percentage from 0% to 100%"},
		{settings.Change{Delay: ok, Buffer: size(-1)}, "buffer -1B is out of range: a size with B, KiB, MiB or GiB from 1518B to 1GiB"},
		{settings.Change{Delay: ok, Limit: i(-7)}, "limit -7 is out of range: a whole number from 1 to 1048576"},
		{settings.Change{Jitter: dur(1000 * time.Hour), Reset: true}, "jitter 1000h is out of range"},
	} {
		for _, at := range []struct {
			n    *Network
			e, d string
		}{{ne, "sw1:p2", ""}, {ne, "sw1:p2", "sw1:p2"}, {na, "h3:eth0", ""}} {
			l := at.n.Link(at.e)
			before := func() []any {
				if l.ATM != nil {
					return []any{l.ATM.AB.Config(), l.ATM.BA.Config()}
				}
				return []any{l.AB.Config(), l.BA.Config()}
			}
			was := before()
			a, err := at.n.Set(at.e, at.d, tc.c)
			if err == nil || !strings.Contains(err.Error(), tc.want) || a != nil {
				t.Errorf("Set(%s, %+v) = %v, %v; want %q", at.e, tc.c, a, err, tc.want)
			}
			if now := before(); fmt.Sprint(now) != fmt.Sprint(was) {
				t.Errorf("Set(%s, %+v) refused but changed the link: %v, was %v", at.e, tc.c, now, was)
			}
		}
	}
}
