//go:build linux

package kernel

import (
	"strings"
	"testing"

	"github.com/atmlab/atmlab/topologies"
)

// The token bucket in front of a host's TAP bills the slower of its link
// and its CPU: Ethernet framing at the link rate, ATM cells at the cell
// stream rate, or a slow host's copy rate with its per-packet cost as octets.
func TestWireOf(t *testing.T) {
	lab, err := topologies.Parse("w.yaml", []byte(`name: w
topology:
  nodes:
    e1: {kind: host, ipv4: 10.0.0.1/24}
    e2: {kind: host, ipv4: 10.0.0.2/24}
    a1: {kind: host, ipv4: 10.0.1.1/24}
    a2: {kind: host, ipv4: 10.0.1.2/24, cpu: {rate: 77M, per_packet: 10us}}
    p1: {kind: host, ipv4: 10.0.2.1/24, cpu: {per_packet: 59.4us}}
    p2: {kind: host, ipv4: 10.0.2.2/24, cpu: {per_packet: 1us}}
  links:
    - {endpoints: ["e1:eth0", "e2:eth0"], ethernet: {rate: 100M}}
    - {endpoints: ["a1:eth0", "a2:eth0"], atm: {phy: oc3}}
    - {endpoints: ["p1:eth0", "p2:eth0"], ethernet: {rate: 1G}}
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		host string
		rate int64
		stab string
	}{
		{"e1", 100_000_000, "overhead 24 mpu 84"},
		{"a1", 149_760_000, "linklayer atm overhead 2 mtu 9196 tsize 2048"},
		{"a2", 77_000_000, "overhead 96 mpu 1"}, // 10 µs = 96.25 octets at 77 Mbit/s
		// A per-packet cost only: 59.4 µs as 594,000 octets at 80 Gbit/s,
		// slower than the 1G link; 1 µs is faster than the link (12.3 µs).
		{"p1", 80_000_000_000, "overhead 594000 mpu 1"},
		{"p2", 1_000_000_000, "overhead 24 mpu 84"},
	} {
		w := wireOf(lab, topologies.Endpoint{Node: tc.host, Port: "eth0"})
		if int64(w.rate) != tc.rate || strings.Join(w.stab(lab.Node(tc.host).Interface("eth0").MTU), " ") != tc.stab {
			t.Errorf("%s: rate %d, stab %q; want %d, %q", tc.host, int64(w.rate), strings.Join(w.stab(9180), " "), tc.rate, tc.stab)
		}
	}
}
