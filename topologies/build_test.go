package topologies

import (
	"strings"
	"testing"
	"time"

	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/emulator/sched"
)

const echoLab = `
name: echo
topology:
  nodes:
    h1: {kind: host, ipv4: 10.0.0.1/24}
    h2: {kind: host, ipv4: 10.0.0.2/24}
    sw1: {kind: switch}
  links:
    - endpoints: ["h1:eth0", "sw1:p1"]
      ethernet: {rate: 100M}
      impair: {delay: 10ms}
    - endpoints: ["h2:eth0", "sw1:p2"]
      ethernet: {rate: 100M}
`

// A ping-sized frame from h1 to h2 and back: four serialisations (two per
// hop, store and forward) each way plus the delay each way.
func TestBuildEchoRTT(t *testing.T) {
	lab, err := Parse("echo.yaml", []byte(echoLab))
	if err != nil {
		t.Fatal(err)
	}
	s := sched.New()
	n, err := Build(lab, s)
	if err != nil {
		t.Fatal(err)
	}
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

func TestBuildRefusesUnmodelled(t *testing.T) {
	lab, err := Parse("hub.yaml", []byte("name: x\ntopology:\n  nodes: {h: {kind: hub}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Build(lab, sched.New()); err == nil || !strings.Contains(err.Error(), "not modelled") {
		t.Fatalf("Build(hub) error = %v", err)
	}
}
