package devices

import (
	"encoding/binary"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/emulator/router"
	"github.com/atmlab/atmlab/emulator/sched"
	. "github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/labfile"
)

// chainLab is ../topologies/testdata/chain.yaml (h1, five routers, h2) with keys on
// every router.
func chainLab(keys string) string {
	b, err := os.ReadFile("../topologies/testdata/chain.yaml")
	if err != nil {
		panic(err)
	}
	return strings.NewReplacer("NAME", "chain", "KEYS", keys).Replace(string(b))
}

// A UDP packet from h1 crosses five routers to h2. With MPLS the core links
// carry one label each, the link into the egress none (PHP); the TTL h2
// sees counts every router (uniform) or only the edges (pipe).
func TestBuildRouterChain(t *testing.T) {
	for _, tc := range []struct {
		keys   string
		ttl    byte
		labels [6]int // labelled frames per link, h1-r1 first
	}{
		{"", 59, [6]int{}},
		{"mpls: true,", 59, [6]int{0, 1, 1, 1, 0, 0}},
		{"mpls: true, ttl: pipe,", 62, [6]int{0, 1, 1, 1, 0, 0}},
		{"mpls: true, null: explicit,", 59, [6]int{0, 1, 1, 1, 1, 0}},
	} {
		lab, err := labfile.Parse("chain.yaml", []byte(chainLab(tc.keys)))
		if err != nil {
			t.Fatal(err)
		}
		if r := lab.Node("h1").Routes; len(r) != 1 || r[0].Via.String() != "10.0.0.254" {
			t.Fatalf("h1's default route: %+v", r)
		}
		s := sched.New()
		n := Build(lab, s)
		var labelled [6]int
		for i, l := range n.Links {
			for _, ch := range []*emulator.Channel{l.AB, l.BA} {
				ch.SetTap(func(f *emulator.Frame, _ time.Duration) {
					if binary.BigEndian.Uint16(f.Data[12:]) == 0x8847 {
						labelled[i]++
					}
				})
			}
		}
		h2 := n.Hosts["h2:eth0"]
		var got [][]byte
		h2.Sink = func(f *emulator.Frame) {
			d := f.Data
			if a, ok := emulator.ParseARP(d[14:]); ok && binary.BigEndian.Uint16(d[12:]) == emulator.EtherTypeARP { // answer r5 as h2's kernel would
				h2.Input(&emulator.Frame{Data: a.Reply([6]byte(lab.MAC(Endpoint{Node: "h2", Port: "eth0"}))).Frame()})
				return
			}
			got = append(got, d[14:])
		}
		f := make([]byte, 14+28)
		copy(f, lab.MAC(Endpoint{Node: "r1", Port: "eth0"}))
		binary.BigEndian.PutUint16(f[12:], 0x0800)
		ip := f[14:]
		ip[0], ip[8], ip[9] = 0x45, 64, 17
		binary.BigEndian.PutUint16(ip[2:], 28)
		copy(ip[12:], []byte{10, 0, 0, 1})
		copy(ip[16:], []byte{10, 0, 5, 1})
		n.Hosts["h1:eth0"].Input(&emulator.Frame{Data: f})
		s.Run()
		if len(got) != 1 || got[0][8] != tc.ttl {
			t.Errorf("%q: h2 got %d packets (want 1 with TTL %d)", tc.keys, len(got), tc.ttl)
		}
		if labelled != tc.labels {
			t.Errorf("%q: labelled frames per link %v, want %v", tc.keys, labelled, tc.labels)
		}
	}
}

// Router lab keys: costs, a shared CPU, and what is wrong with a router.
func TestParseRouter(t *testing.T) {
	lab, err := labfile.Parse("r.yaml", []byte(strings.Replace(chainLab("mpls: true, cost: {ip: 3us, swap: 3.2us, per_byte: 1ns, cpu: shared},"), "r5: {kind: router, mpls: true, cost: {ip: 3us, swap: 3.2us, per_byte: 1ns, cpu: shared},", "r5: {kind: router,", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if c := lab.Node("r1").Router.Cost; c.IP != 3*time.Microsecond || c.Swap != 3200*time.Nanosecond || c.PerByte != time.Nanosecond || !c.SharedCPU {
		t.Errorf("r1 cost %+v", c)
	}
	n := Build(lab, sched.New())
	if routerOf(n, "r1").Config().CPU != routerOf(n, "r4").Config().CPU || routerOf(n, "r5").Config().CPU != nil {
		t.Error("routers with cpu: shared do not share one CPU, or a router without costs has one")
	}
	_, err = labfile.Parse("bad.yaml", []byte(`name: bad
topology:
  nodes:
    r1: {kind: router, ttl: short, null: none, cost: {ip: fast}, interfaces: {eth0: {}}}
    h1: {kind: host, ipv4: 10.0.0.1/24}
  links:
    - {endpoints: ["h1:eth0", "r1:eth0"]}
`))
	for _, want := range []string{`topology.nodes.r1.ttl: "short": use one of uniform, pipe`, `topology.nodes.r1.null: "none"`,
		`topology.nodes.r1.cost.ip: bad duration`, `router interface eth0 needs an address`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("errors lack %q: %v", want, err)
		}
	}
}

// routerOf returns the router model of the node named name.
func routerOf(n *Network, name string) *router.Router { return n.Device(name).(*ipRouter).r }
