package kinds_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/atmlab/atmlab/emulator/units"
	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/defaults"
	"github.com/atmlab/atmlab/topologies/kinds"
	"github.com/atmlab/atmlab/topologies/labfile"
	"github.com/atmlab/atmlab/topologies/labyaml"
)

// The errors for a missing or unknown kind list the table's kinds, and
// each kind admits exactly its row's keys.
func TestKindsTable(t *testing.T) {
	list := kinds.List()
	if last := kinds.Table[len(kinds.Table)-1].Kind; !strings.HasPrefix(list, "host, switch, hub, atm-switch") || !strings.HasSuffix(list, " or "+string(last)) {
		t.Errorf("kinds.List() = %q, want the table's kinds in its order", list)
	}
	for _, k := range kinds.Table {
		if !strings.Contains(list, string(k.Kind)) {
			t.Errorf("kinds.List() = %q lacks %s", list, k.Kind)
		}
	}
	for src, want := range map[string]string{
		"n1: {kind: toaster}":     `bad.yaml:4: topology.nodes.n1.kind: unknown kind "toaster"; use ` + kinds.List(),
		"n1: {ipv4: 10.0.0.1/24}": "bad.yaml:4: topology.nodes.n1.kind: missing; say kind: " + kinds.List(),
	} {
		_, err := labfile.Parse("bad.yaml", []byte("name: bad\ntopology:\n  nodes:\n    "+src+"\n"))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", src, err, want)
		}
	}
	for _, k := range kinds.Table {
		for _, key := range k.Keys {
			if _, err := labfile.Parse("k.yaml", []byte("name: k\ntopology:\n  nodes:\n    n1: {kind: "+string(k.Kind)+", "+key+": x}\n")); err != nil && strings.Contains(err.Error(), "unknown key") {
				t.Errorf("kind %s refuses its own key %s: %v", k.Kind, key, err)
			}
		}
		_, err := labfile.Parse("k.yaml", []byte("name: k\ntopology:\n  nodes:\n    n1: {kind: "+string(k.Kind)+", colour: red}\n"))
		if err == nil || !strings.Contains(err.Error(), "topology.nodes.n1.colour: unknown key") {
			t.Errorf("kind %s takes a key no row lists: %v", k.Kind, err)
		}
	}
}

// Each row owns its keys: every key a row takes is decoded by the row
// itself (Row.Decode), except those every kind with interfaces shares
// (the lab file's reader decodes them), and a row decodes no key it does
// not take.
func TestEveryRowDecodesItsOwnKeys(t *testing.T) {
	shared := []string{"ipv4", "mtu", "interfaces", "routes"}
	for _, r := range kinds.Table {
		n := &topologies.Node{Name: "n1", Kind: r.Kind}
		if r.Start != nil {
			r.Start(n)
		}
		var decoded []string
		if r.Decode != nil {
			for _, f := range r.Decode(&labyaml.Decoder{File: "k.yaml"}, n) {
				decoded = append(decoded, f.Name)
			}
		}
		for _, key := range r.Keys {
			if slices.Contains(shared, key) != !slices.Contains(decoded, key) {
				t.Errorf("kind %s: key %s: decoded by its row = %v, shared by the kinds with interfaces = %v; want exactly one", r.Kind, key, slices.Contains(decoded, key), slices.Contains(shared, key))
			}
		}
		for _, key := range decoded {
			if !slices.Contains(r.Keys, key) {
				t.Errorf("kind %s decodes %s, a key it does not take", r.Kind, key)
			}
		}
	}
}

// The keys that moved into their kinds' rows decode as before: a
// switch's buffer, ageing and cpu, a router's mpls, a host's cpu and
// sysctls.
func TestRowsDecodeTheirKeys(t *testing.T) {
	lab, err := labfile.Parse("k.yaml", []byte(`name: k
topology:
  nodes:
    h1: {kind: host, ipv4: 10.0.0.1/24, cpu: {per_packet: 2us, rate: 1Gbit/s}, sysctls: {net.ipv4.tcp_congestion_control: reno}}
    h2: {kind: host, ipv4: 10.0.1.1/24, cpu: {per_byte: 8ns, queue: 7}}
    s1: {kind: switch, buffer: 64KiB, ageing: 30s, cpu: {per_packet: 1us}}
    r1: {kind: router, mpls: true, interfaces: {eth0: {ipv4: 10.0.0.254/24}, eth1: {ipv4: 10.0.1.254/24}}}
  links:
    - {endpoints: ["h1:eth0", "s1:p1"]}
    - {endpoints: ["r1:eth0", "s1:p2"]}
    - {endpoints: ["r1:eth1", "h2:eth0"]}
`))
	if err != nil {
		t.Fatal(err)
	}
	h1, h2, s1, r1 := lab.Node("h1"), lab.Node("h2"), lab.Node("s1"), lab.Node("r1")
	if c := h1.CPU; c == nil || c.PerPacket != 2*time.Microsecond || c.Copy != units.Gbps || c.Queue != defaults.CPUQueue {
		t.Errorf("h1's cpu = %+v, want 2us a packet at 1 Gbit/s, the default queue", c)
	}
	if c := h2.CPU; c == nil || c.Copy != units.Gbps || c.Queue != 7 {
		t.Errorf("h2's cpu = %+v, want per_byte 8ns as 1 Gbit/s, queue 7", c)
	}
	if len(h1.Sysctls) != 1 || h1.Sysctls[0].Key != "net.ipv4.tcp_congestion_control" || h1.Sysctls[0].Value != "reno" || h1.Sysctls[0].Line != 4 {
		t.Errorf("h1's sysctls = %+v", h1.Sysctls)
	}
	if s1.Buffer != 64<<10 || s1.Ageing != 30*time.Second || s1.CPU == nil || s1.CPU.PerPacket != time.Microsecond {
		t.Errorf("s1: buffer %v, ageing %v, cpu %+v; want 64KiB, 30s, 1us a packet", s1.Buffer, s1.Ageing, s1.CPU)
	}
	if !r1.MPLS {
		t.Errorf("r1's mpls: true not decoded")
	}
}
