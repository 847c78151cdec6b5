package devices

import (
	"testing"
	"time"

	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/emulator/emutest"
	"github.com/atmlab/atmlab/emulator/sched"
	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/labfile"
)

const wireLab = `
name: wired
topology:
  nodes:
    h1: {kind: host, ipv4: 10.0.0.1/24}
    h2: {kind: host, ipv4: 10.0.0.2/24}
    w1: {kind: wire}
  links:
    - {endpoints: ["h1:eth0", "w1:a"], ethernet: {rate: 100M}}
    - {endpoints: ["w1:b", "h2:eth0"], ethernet: {rate: 10M}}
`

// A wire passes each frame on once it has fully arrived: three full-size
// frames from h1 leave it at 10 Mbit/s back to back, and h2's answer comes
// back the other way; nothing is learned, so a frame for h1's own address
// goes through too.
func TestWire(t *testing.T) {
	lab, err := labfile.Parse("wired.yaml", []byte(wireLab))
	if err != nil {
		t.Fatal(err)
	}
	s := sched.New()
	n := Build(lab, s)
	var at2, at1 []time.Duration
	n.Hosts["h2:eth0"].Sink = func(*emulator.Frame) { at2 = append(at2, s.Now()) }
	n.Hosts["h1:eth0"].Sink = func(*emulator.Frame) { at1 = append(at1, s.Now()) }
	for range 3 {
		f := make([]byte, 1514)
		f[0] = 0x02 // to h1's own side: a switch would filter it once it learned h1
		n.Hosts["h1:eth0"].Input(&emulator.Frame{Data: f})
	}
	s.Run()
	// The first frame's last bit reaches the wire after (8+1518)*8 bits at
	// 100M (122.08 µs) and h2 after as many at 10M more (1220.8 µs); the
	// next leave the wire one frame and its 12-octet gap apart ((8+1518+12)*8
	// bits at 10M, 1230.4 µs): the wire has them by then.
	want := []time.Duration{1342880 * time.Nanosecond, 2573280 * time.Nanosecond, 3803680 * time.Nanosecond}
	if len(at2) != 3 || at2[0] != want[0] || at2[1] != want[1] || at2[2] != want[2] {
		t.Fatalf("h2 got frames at %v, want %v", at2, want)
	}
	start := s.Now()
	n.Hosts["h2:eth0"].Input(&emulator.Frame{Data: make([]byte, 1514)})
	s.Run()
	if len(at1) != 1 || at1[0]-start != 1220800*time.Nanosecond+122080*time.Nanosecond {
		t.Fatalf("h1 got frames %v after %v, want one 1342.88 µs later", at1, start)
	}
	r, ok := n.Device("w1").Report(s.Now())
	if !ok || r.Kind != topologies.KindWire || r.Counters["forwarded"] != 4 || r.Line != "wire w1: 4 frames forwarded" {
		t.Errorf("report %+v", r)
	}
	rows := map[string]emulator.PortStats{}
	for _, row := range n.Stats() {
		rows[row.Port] = row
	}
	if a, b := rows["w1:a"], rows["w1:b"]; a.RxFrames != 3 || a.TxFrames != 1 || b.RxFrames != 1 || b.TxFrames != 3 || b.QueueHigh != 3*1514 { // all three, the first in service, when the third arrives
		t.Errorf("wire ports: a %+v, b %+v", a, b)
	}
}

// A wire's port keeps the contract of every emulator.Port.
func TestWirePortConformance(t *testing.T) {
	emutest.Port(t, emutest.PortSubject{Name: "wire-port", New: func(s *sched.Scheduler) (emulator.Port, func(seq, n int)) {
		w := &wire{named: "w1"}
		p, q := w.etherPort(nil, "a"), w.etherPort(nil, "b")
		q.SetTX(&emutest.FakeTX{Room: 1 << 20})
		return p, func(seq, n int) { q.Receive(emutest.Frame(seq, n, emutest.MACB)) } // leaves by p
	}})
}

// A wire counts as forwarded only what its buffer took: 200 frames from
// h1 at 100M into the 10M link overflow WireQueue, the frames it refused
// are the link's drops, and h2 gets exactly the frames forwarded.
func TestWireCountsDrops(t *testing.T) {
	lab, err := labfile.Parse("wired.yaml", []byte(wireLab))
	if err != nil {
		t.Fatal(err)
	}
	s := sched.New()
	n := Build(lab, s)
	got := 0
	n.Hosts["h2:eth0"].Sink = func(*emulator.Frame) { got++ }
	h1 := n.Hosts["h1:eth0"]
	for range 200 {
		for !h1.CanAccept() {
			s.Step()
		}
		h1.Input(&emulator.Frame{Data: make([]byte, 1514)})
	}
	s.Run()
	r, _ := n.Device("w1").Report(s.Now())
	rows := map[string]emulator.PortStats{}
	for _, row := range n.Stats() {
		rows[row.Port] = row
	}
	b := rows["w1:b"]
	if fwd := r.Counters["forwarded"]; b.Drops == 0 || fwd != uint64(got) || fwd+b.Drops != 200 || rows["w1:a"].RxFrames != 200 {
		t.Errorf("forwarded %d, h2 got %d, w1:b dropped %d, w1:a received %d: want forwarded = got, forwarded + drops = 200, some drops", fwd, got, b.Drops, rows["w1:a"].RxFrames)
	}
}
