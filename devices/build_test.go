package devices

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/emulator/sched"
	"github.com/atmlab/atmlab/emulator/units"
	"github.com/atmlab/atmlab/internal/labtest"
	. "github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/labfile"
)

var echoLab = labtest.Set(labtest.Lab("two-hosts-switch", "echo"), "topology.links[0].impair", "{delay: 10ms}")

// A ping-sized frame from h1 to h2 and back: four serialisations (two per
// hop, store and forward) each way plus the delay each way.
func TestBuildEchoRTT(t *testing.T) {
	lab, err := labfile.Parse("echo.yaml", []byte(echoLab))
	if err != nil {
		t.Fatal(err)
	}
	s := sched.New()
	n := Build(lab, s)
	h1, h2 := n.Hosts["h1:eth0"], n.Hosts["h2:eth0"]
	mk := func(dst, src byte) *emulator.Frame {
		d := make([]byte, 98) // 84-byte ICMP echo in IPv4 in Ethernet
		d[5], d[11] = dst, src
		return &emulator.Frame{Data: d}
	}
	var back time.Duration
	h2.Sink = func(f *emulator.Frame) { h2.Input(mk(1, 2)) }
	h1.Sink = func(f *emulator.Frame) { back = s.Now() }
	h1.Input(mk(0xff, 1)) // the first goes out flooded, as an ARP request would
	s.Run()
	// 98+4 = 102-byte frame: last bit after (8+102)*8 bits = 8.8 µs at 100M.
	want := 2*10*time.Millisecond + 4*8800*time.Nanosecond
	if back != want {
		t.Fatalf("echo returned at %v, want %v", back, want)
	}
	rows := n.Stats()
	if len(rows) != 4 || rows[0].Port != "h1:eth0" || rows[0].TxFrames != 1 || rows[0].RxFrames != 1 {
		t.Fatalf("stats = %+v", rows)
	}
	if n.Link("sw1:p2") == nil || n.Link("h9:eth0") != nil {
		t.Fatal("Link() lookup by endpoint is wrong")
	}
}

var hubLab = labtest.Set(labtest.Lab("three-hosts-hub", "hub"), "topology.links[2].ethernet.cable", "100m")

// Hosts on a hub: a frame reaches every other host when its last bit does,
// and two hosts that start together collide and are counted.
func TestBuildHub(t *testing.T) {
	lab, err := labfile.Parse("hub.yaml", []byte(hubLab))
	if err != nil {
		t.Fatal(err)
	}
	s := sched.New()
	n := Build(lab, s)
	got := map[string][]time.Duration{}
	for name, h := range n.Hosts {
		h.Sink = func(f *emulator.Frame) { got[name] = append(got[name], s.Now()) }
	}
	n.Hosts["h1:eth0"].Input(&emulator.Frame{Data: make([]byte, 1514)})
	s.Run()
	// Last bit after (8+1518)*8 bits = 122.08 µs, plus the collision
	// window: repeater class II and DTEs (96 bit times = 0.96 µs), and for
	// h3 its 100 m of cable (500 ns).
	if len(got["h1:eth0"]) != 0 || got["h2:eth0"][0] != 122080+960 || got["h3:eth0"][0] != 122080+960+500 {
		t.Fatalf("arrivals %v", got)
	}
	n.Hosts["h1:eth0"].Input(&emulator.Frame{Data: make([]byte, 1514)})
	n.Hosts["h2:eth0"].Input(&emulator.Frame{Data: make([]byte, 1514)})
	s.Run()
	hd := n.Hosts["h1:eth0"].Stats().HalfDuplex
	if hd == nil || hd.Collisions == 0 || n.Device("hub1").(*hub).h.Stats().Collisions == 0 {
		t.Fatalf("simultaneous starts did not collide: %+v", hd)
	}
	if len(got["h3:eth0"]) != 3 {
		t.Fatalf("h3 received %d frames, want all 3 after the collision resolved", len(got["h3:eth0"]))
	}
	if n.Link("hub1:p3").Medium == nil {
		t.Fatal("a hub link has no station")
	}
	_, err = labfile.Parse("bad.yaml", []byte(strings.ReplaceAll(hubLab, "rate: 100M, cable", "rate: 10M, cable")))
	if err == nil || !strings.Contains(err.Error(), "hub hub1 runs at one rate") {
		t.Fatalf("mixed hub rates: %v", err)
	}
}

// A host's cpu: key sets its processing limit; rate: is a copy rate.
func TestHostCPUKey(t *testing.T) {
	lab, err := labfile.Parse("cpu.yaml", []byte(labtest.Set(labtest.Lab("two-hosts", "cpu"), "topology.nodes.h1.cpu", "{rate: 80M, per_packet: 20us, queue: 8}")))
	if err != nil {
		t.Fatal(err)
	}
	if c := lab.Node("h1").CPU; c == nil || c.Copy != 80*units.Mbps || c.PerPacket != 20*time.Microsecond || c.Queue != 8 {
		t.Fatalf("h1 cpu %+v", c)
	}
	n := Build(lab, sched.New())
	if n.Hosts["h1:eth0"].CPU == nil || n.Hosts["h2:eth0"].CPU != nil {
		t.Fatal("build: a host's cpu: is not its ports' CPU")
	}
}

// Build is deterministic: the same lab built twice, fed the same frames,
// does the same thing, event for event. The fuzzer relies on it (an input
// that takes another path on each run looks new each time), and so does
// every virtual-clock result.
func TestBuildDeterministic(t *testing.T) {
	files, err := filepath.Glob("../topologies/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no lab files: %v", err)
	}
	labs := map[string][]byte{}
	for _, file := range files {
		if labs[file], err = os.ReadFile(file); err != nil {
			t.Fatal(err)
		}
	}
	for i, seed := range buildSeeds() {
		if _, err := labfile.Parse("seed.yaml", seed); err == nil {
			labs[fmt.Sprintf("FuzzParseBuild seed %d", i)] = seed
		}
	}
	for _, file := range slices.Sorted(maps.Keys(labs)) {
		var runs [2]string
		for i := range runs {
			runs[i] = broadcastRun(t, file, labs[file])
		}
		t.Logf("%s: %s", file, runs[0][:strings.IndexByte(runs[0], '\n')])
		if runs[0] != runs[1] {
			t.Errorf("%s: two builds differ:\n%s\n---\n%s", file, runs[0], runs[1])
		}
	}
}

// broadcastRun builds a lab, sends a broadcast from every host, in name
// order, and an IPv4 packet from every host to every other, runs 20,000
// events and returns what every port counted and when the last event ran.
func broadcastRun(t *testing.T, file string, data []byte) string {
	t.Helper()
	lab, err := labfile.Parse(file, data)
	if err != nil {
		t.Fatal(err)
	}
	s := sched.New()
	n := Build(lab, s)
	names := slices.Sorted(maps.Keys(n.Hosts))
	for _, name := range names {
		broadcast := make([]byte, 60)
		copy(broadcast, "\xff\xff\xff\xff\xff\xff\x02\x00\x00\x00\x00\x01\x08\x06")
		n.Hosts[name].Input(&emulator.Frame{Data: broadcast})
		from := addrOf(lab, name)
		for _, to := range names {
			if to != name && from.IsValid() && addrOf(lab, to).IsValid() {
				node, port, _ := strings.Cut(to, ":")
				e := Endpoint{Node: node, Port: port}
				n.Hosts[name].Input(ipv4([6]byte(lab.MAC(e)), from.String(), addrOf(lab, to).String(), 1000))
			}
		}
	}
	events := 0
	for ; events < 20000 && s.Step(); events++ {
	}
	st, err := json.Marshal(n.Stats())
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%d events, last at %v\n%s", events, s.Now(), st)
}

// addrOf returns the IPv4 address of a host interface "node:iface".
func addrOf(lab *Lab, endpoint string) netip.Addr {
	node, port, _ := strings.Cut(endpoint, ":")
	if i := lab.Node(node).Interface(port); i != nil {
		return i.IPv4.Addr()
	}
	return netip.Addr{}
}
