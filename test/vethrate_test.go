//go:build integration

package test

import (
	"testing"

	"github.com/atmlab/atmlab/harness/labrun"
)

// smallOC3Lab is two hosts through an atm-switch on OC-3c with iperf3
// UDP at 100 B, its default buffers, for three seconds.
const smallOC3Lab = `name: NAME
topology:
  nodes:
    h1: {kind: host, ipv4: 10.0.0.1/24}
    h2: {kind: host, ipv4: 10.0.0.2/24}
    atm1: {kind: atm-switch}
  links:
    - {endpoints: ["h1:eth0", "atm1:p1"], atm: {phy: oc3}}
    - {endpoints: ["h2:eth0", "atm1:p2"], atm: {phy: oc3}}
experiments:
  - {name: small, from: h1, to: h2, tool: iperf3, tests: [UDP_STREAM], sizes: [100], duration: 3s}
`

// A lab run's UDP point of 100-byte datagrams through OC-3c that falls
// more than 1 % short measures a bare veth pair beside the lab with the
// same iperf3 command and records what it carried; where the ceiling
// needs more datagrams a second than that, the point names the hosts' own
// frame rate first. The pair is gone after the run (labRun checks).
func TestLabRunShortSmallDatagramsMeasureAVethPair(t *testing.T) {
	requireRoot(t, "iperf3")
	_, recs := labRun(t, smallOC3Lab)
	if len(recs) != 1 {
		t.Fatalf("%d records, want 1", len(recs))
	}
	rec := recs[0]
	need := rec.Ceiling / (8 * 100)
	t.Logf("100 B: %.1f %% of the ceiling (%.1f k datagrams/s needed), veth pair %.1f k/s, short by %v", 100*rec.Result.ThroughputBps/rec.Ceiling, need/1e3, rec.VethFrameRate/1e3, rec.ShortBy)
	if len(rec.ShortBy) == 0 {
		t.Skip("the point reached its ceiling: no veth pair was needed")
	}
	if rec.VethFrameRate < 1e3 || rec.VethFrameRate > 5e6 {
		t.Fatalf("a short point's veth_frame_rate is %.0f datagrams/s, want a veth pair's measured rate", rec.VethFrameRate)
	}
	if got := rec.ShortBy[0] == labrun.ShortHostRate; got != (need > rec.VethFrameRate) {
		t.Errorf("ceiling needs %.0f/s, veth pair carried %.0f/s: short by %v", need, rec.VethFrameRate, rec.ShortBy)
	}
}
