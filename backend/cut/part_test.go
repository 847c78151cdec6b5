package cut

import (
	"context"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/atmlab/atmlab/devices"
	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/emulator/sched"
	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/labfile"
)

const twoSwitches = `name: split
topology:
  nodes:
    h1: {kind: host, ipv4: 10.0.0.1/24}
    h2: {kind: host, ipv4: 10.0.0.2/24}
    s1: {kind: switch}
    s2: {kind: switch}
  links:
    - {endpoints: ["h1:eth0", "s1:p1"], ethernet: {rate: 100M}}
    - {endpoints: ["s1:p9", "s2:p9"], ethernet: {rate: 100M}, impair: {delay: 1ms}}
    - {endpoints: ["h2:eth0", "s2:p1"], ethernet: {rate: 100M}}
`

func parse(t *testing.T, text string) *topologies.Lab {
	t.Helper()
	lab, err := labfile.Parse("split.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return lab
}

func partOf(node string) string {
	if node == "h1" || node == "s1" {
		return "left"
	}
	return "right"
}

func TestPartKeepsItsNodesAndStandsInForTheFarEnd(t *testing.T) {
	lab := parse(t, twoSwitches)
	p, err := NewPart(lab, "left", []string{"h1", "s1"}, partOf)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, n := range p.Lab.Nodes {
		names = append(names, n.Name+"/"+string(n.Kind))
	}
	if p.Lab.Name != "split-left" || strings.Join(names, " ") != "h1/host s1/switch s2/host" || strings.Join(p.StandIns, " ") != "s2" {
		t.Fatalf("part lab %s with nodes %v, stand-ins %v", p.Lab.Name, names, p.StandIns)
	}
	if len(p.Lab.Links) != 2 || len(p.Cuts) != 1 {
		t.Fatalf("%d links, %d cuts; want 2 and 1", len(p.Lab.Links), len(p.Cuts))
	}
	e := p.Cuts[0]
	if e.Index != 1 || e.Local.String() != "s1:p9" || e.Remote.String() != "s2:p9" || !e.LocalIsA || e.Peer != "right" || e.Delay != time.Millisecond || e.OutDelay != time.Millisecond {
		t.Fatalf("cut end %+v", e)
	}
	if l := p.Lab.Links[1]; l.Propagation != 0 || !l.AB.Impair.IsZero() || l.AB.Rate != lab.Links[1].AB.Rate {
		t.Fatalf("the part's cut link keeps what the receiver applies: %+v", l)
	}
	if lab.Links[1].AB.Impair.Delay != time.Millisecond {
		t.Fatal("cutting the part changed the whole lab")
	}
}

// TestPartOfALabWithPartsBuildsAlone: the lab file says where it is cut
// (parts:); a part's own lab, whose cut link ends in a stand-in with the
// delay left to the receiving part, builds as a lab of its own.
func TestPartOfALabWithPartsBuildsAlone(t *testing.T) {
	lab := parse(t, twoSwitches+"parts:\n  left: [h1, s1]\n  right: [h2, s2]\n")
	for _, part := range []string{"left", "right"} {
		var nodes []string
		for _, n := range []string{"h1", "s1", "h2", "s2"} {
			if partOf(n) == part {
				nodes = append(nodes, n)
			}
		}
		p, err := NewPart(lab, part, nodes, partOf)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Lab.Parts) != 0 {
			t.Errorf("part %s's own lab has parts %v", part, p.Lab.Parts)
		}
		devices.Build(p.Lab, sched.New()) // panics on a cut it cannot build
	}
}

func TestPartRefusesWhatRealTimeCannotCarry(t *testing.T) {
	lab := parse(t, strings.Replace(twoSwitches, "impair: {delay: 1ms}", "impair: {delay: 1ms, loss: 0.01}", 1))
	_, err := NewPart(lab, "left", []string{"h1", "s1"}, partOf)
	if err == nil || !strings.Contains(err.Error(), "split.yaml:") || !strings.Contains(err.Error(), "s1:p9-s2:p9") || !strings.Contains(err.Error(), "loss") {
		t.Fatalf("a cut with loss: %v", err)
	}
	if _, err := NewPart(parse(t, twoSwitches), "middle", nil, partOf); err == nil {
		t.Fatal("a part with no nodes was not refused")
	}
}

// fakeLoop runs calls when the test says and reads a clock the test sets.
type fakeLoop struct {
	mu    sync.Mutex
	calls []func()
	now   atomic.Int64
}

func (l *fakeLoop) Do(f func())        { l.mu.Lock(); l.calls = append(l.calls, f); l.mu.Unlock() }
func (l *fakeLoop) Now() time.Duration { return time.Duration(l.now.Load()) }
func (l *fakeLoop) run() int {
	l.mu.Lock()
	calls := l.calls
	l.calls = nil
	l.mu.Unlock()
	for _, f := range calls {
		f()
	}
	return len(calls)
}

// watchLoop is a fakeLoop that reads the socket itself once Start hands
// it over (Watcher), when the test polls it.
type watchLoop struct {
	fakeLoop
	read func()
}

func (l *watchLoop) Watch(fd int, read func()) error { l.read = read; return nil }

// half is one part built on a scheduler of its own, with its cut.
type half struct {
	part *Part
	net  *devices.Network
	s    *sched.Scheduler
	loop *fakeLoop
	cuts *Cuts
}

func newHalf(t *testing.T, lab *topologies.Lab, name string, nodes []string) *half {
	t.Helper()
	p, err := NewPart(lab, name, nodes, partOf)
	if err != nil {
		t.Fatal(err)
	}
	s := sched.New()
	return &half{part: p, net: devices.Build(p.Lab, s), s: s, loop: &fakeLoop{}}
}

// A frame h1 sends departs s1's transmitter toward the cut at its last
// bit, crosses as a datagram stamped with that departure, and reaches h2
// at departure + 1 ms on the right part's clock, which reads 7 ms more
// than the left's; both parts count it.
func TestCutCarriesFrameToPeerAtDeparturePlusDelay(t *testing.T) {
	t.Run("reader goroutine", func(t *testing.T) { crossCut(t, false) })
	t.Run("read by the loop", func(t *testing.T) { crossCut(t, true) })
}

func crossCut(t *testing.T, watch bool) {
	lab := parse(t, twoSwitches)
	left := newHalf(t, lab, "left", []string{"h1", "s1"})
	right := newHalf(t, lab, "right", []string{"h2", "s2"})
	const skew = 7 * time.Millisecond
	right.loop.now.Store(int64(skew))
	var rightLoop Loop = right.loop
	wl := &watchLoop{}
	if watch {
		wl.now.Store(int64(skew))
		right.loop, rightLoop = &wl.fakeLoop, wl
	}
	var err error
	tag := Tag(lab)
	if left.cuts, err = Attach(left.part, left.net, left.s, left.loop, tag, Config{Listen: "127.0.0.1:0", Peers: map[string]string{"right": "127.0.0.1:1"}}); err != nil {
		t.Fatal(err)
	}
	defer left.cuts.Close()
	if right.cuts, err = Attach(right.part, right.net, right.s, rightLoop, tag, Config{Listen: "127.0.0.1:0", Peers: map[string]string{"left": left.cuts.Addr().String()}}); err != nil {
		t.Fatal(err)
	}
	defer right.cuts.Close()
	left.cuts.peers["right"].addr = right.cuts.Addr() // known only now

	// The clocks agree: both instances' exchanges, with the clocks still.
	ctx := context.Background()
	errs := make(chan error, 2)
	for _, h := range []*half{left, right} {
		go func() { errs <- h.cuts.Start(ctx, Config{Wait: 5 * time.Second}) }()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if off := left.cuts.peers["right"].offset.Load(); time.Duration(off) != skew {
		t.Fatalf("left's estimate of right's clock: %v ahead, want %v", time.Duration(off), skew)
	}

	var got []time.Duration
	right.net.Hosts["h2:eth0"].Sink = func(f *emulator.Frame) { got = append(got, right.s.Now()); f.Release() }
	frame := make([]byte, 1000)
	copy(frame, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 2, 0, 0, 0, 0, 1}) // broadcast from h1
	left.s.At(time.Millisecond, func() { left.net.Hosts["h1:eth0"].Input(&emulator.Frame{Data: frame}) })
	left.s.RunUntil(5 * time.Millisecond)
	// 1000 octets + 8 preamble + 4 FCS + 12 gap at 100M: 80.96 µs on the
	// wire, last bit at 80 µs + 0.96, per hop, two hops to the cut.
	perHop := time.Duration((1000+8+4)*8*10) * time.Nanosecond
	departure := time.Millisecond + 2*perHop
	deadline := time.Now().Add(5 * time.Second)
	for right.loop.run() == 0 && len(right.cuts.ends[0].queue) == 0 {
		if watch {
			if wl.read == nil {
				t.Fatal("Start did not hand the socket to a loop that watches")
			}
			wl.read()
		}
		if time.Now().After(deadline) {
			t.Fatal("no frame reached the right part")
		}
		time.Sleep(time.Millisecond)
	}
	right.s.RunUntil(20 * time.Millisecond)
	want := departure + skew + time.Millisecond + perHop // on right's clock, then s2 to h2
	if len(got) != 1 || got[0] != want {
		t.Fatalf("h2 got the frame at %v, want %v", got, want)
	}
	ls, rs := left.cuts.Stats()[0], right.cuts.Stats()[0]
	if ls.Sent != 1 || rs.Received != 1 || rs.Lost != 0 || rs.Late != 0 || rs.Exchanges == 0 || rs.Offset != -skew {
		t.Fatalf("left %+v\nright %+v", ls, rs)
	}

	// The same frame from an address the left part's pongs never came
	// from does not reach the lab: it is a stray.
	forger, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer forger.Close()
	strays := right.cuts.strays.Load()
	forged := AppendFrame(nil, Frame{Link: uint16(right.cuts.ends[0].Index), BToA: right.cuts.ends[0].LocalIsA, Seq: 2, Departure: departure + perHop, Data: frame})
	if _, err := forger.WriteToUDPAddrPort(forged, right.cuts.Addr()); err != nil {
		t.Fatal(err)
	}
	for right.cuts.strays.Load() == strays && right.cuts.Stats()[0].Received == 1 {
		if watch {
			wl.read()
		}
		right.loop.run()
		if time.Now().After(deadline) {
			t.Fatal("the forged frame was neither taken nor counted a stray")
		}
		time.Sleep(time.Millisecond)
	}
	right.loop.run()
	right.s.RunUntil(40 * time.Millisecond)
	if len(got) != 1 || right.cuts.Stats()[0].Received != 1 {
		t.Fatalf("a frame from a stranger reached h2: got %v, %+v", got, right.cuts.Stats()[0])
	}
}

func TestParsePeers(t *testing.T) {
	got, err := ParsePeers([]string{"right=192.0.2.2:47001,middle=m:1", "far=[::1]:9"})
	if err != nil || len(got) != 3 || got["right"] != "192.0.2.2:47001" || got["middle"] != "m:1" || got["far"] != "[::1]:9" {
		t.Fatalf("%v, %v", got, err)
	}
	for _, bad := range [][]string{{"right"}, {"=a:1"}, {"right=a:1", "right=b:2"}} {
		if _, err := ParsePeers(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// Two instances of different labs do not agree on time: the pinger says
// its peer runs another lab.
func TestCutRefusesPeerOfAnotherLab(t *testing.T) {
	lab := parse(t, twoSwitches)
	left := newHalf(t, lab, "left", []string{"h1", "s1"})
	right := newHalf(t, lab, "right", []string{"h2", "s2"})
	var err error
	if right.cuts, err = Attach(right.part, right.net, right.s, right.loop, 2, Config{Listen: "127.0.0.1:0", Peers: map[string]string{"left": "127.0.0.1:1"}}); err != nil {
		t.Fatal(err)
	}
	defer right.cuts.Close()
	if left.cuts, err = Attach(left.part, left.net, left.s, left.loop, 1, Config{Listen: "127.0.0.1:0", Peers: map[string]string{"right": right.cuts.Addr().String()}}); err != nil {
		t.Fatal(err)
	}
	defer left.cuts.Close()
	err = left.cuts.Start(context.Background(), Config{Wait: 5 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "runs another lab") {
		t.Fatalf("a peer of another lab: %v", err)
	}
}
