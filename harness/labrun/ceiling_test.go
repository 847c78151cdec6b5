package labrun

import (
	"math"
	"testing"

	"github.com/atmlab/atmlab/harness/perf"
	"github.com/atmlab/atmlab/harness/vperf"
	"github.com/atmlab/atmlab/topologies/labfile"
)

// An SCTP point's ceiling is for the packets of the stack that measured
// it: on a 1 Gbit/s path at MTU 9000 pion's 8952-octet message takes two
// packets (8212 + 836 octets of IP, 9124 on the wire), the kernel's and
// the virtual model's one 9000-octet packet (9038 on the wire).
func TestSCTPRecordCeilingIsTheMeasuringStacks(t *testing.T) {
	lab, err := labfile.Parse("j.yaml", []byte("name: j\ntopology:\n  nodes:\n    h1: {kind: host, ipv4: 10.0.0.1/24, mtu: 9000}\n    h2: {kind: host, ipv4: 10.0.0.2/24, mtu: 9000}\n  links:\n    - {endpoints: [\"h1:eth0\", \"h2:eth0\"], ethernet: {rate: 1G}}\nexperiments:\n  - {name: e, from: h1, to: h2, tests: [SCTP_STREAM], sizes: [8952], duration: 100ms}\n"))
	if err != nil {
		t.Fatal(err)
	}
	r := &Runner{Lab: lab}
	p := Points(lab)[0]
	for _, tc := range []struct {
		implementation string
		want           float64
	}{
		{perf.PionImplementation, 1e9 * 8952 / 9124},
		{"kernel", 1e9 * 8952 / 9038},
		{vperf.Implementation, 1e9 * 8952 / 9038},
	} {
		rec := Record{Point: p}
		rec.Result.Spec.Message = 8952
		rec.Result.ThroughputBps = 600e6
		rec.Result.Implementation = tc.implementation
		r.judge(p, &rec)
		if math.Abs(rec.Ceiling-tc.want) > 1e-6 {
			t.Errorf("%s: ceiling %.0f, want %.0f", tc.implementation, rec.Ceiling, tc.want)
		}
	}
}
