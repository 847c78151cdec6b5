package virtual

import (
	"context"
	"fmt"
	"github.com/atmlab/atmlab/harness/vperf"
	"math"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/atmlab/atmlab/harness/perf"
	"github.com/atmlab/atmlab/harness/theory"
	"github.com/atmlab/atmlab/internal/labtest"
	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/labfile"
)

// lab parses a lab file's text.
func lab(t testing.TB, text string) *topologies.Lab {
	t.Helper()
	l, err := labfile.Parse("test.yaml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// measure runs one test from h1 to h2 of a freshly built lab.
func measure(t *testing.T, l *topologies.Lab, spec perf.Spec) perf.Result {
	t.Helper()
	v, err := Build(l, l.Seed)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	v.Sched.RunUntil(StartAt)
	res, err := vperf.Run(vperf.Test{Lab: v.Lab, From: "h1", To: "h2", Addr: netip.MustParseAddr(l.Node("h2").Address()), Spec: spec})
	if err != nil {
		t.Fatal(err)
	}
	if res.Error != "" {
		t.Fatal(res.Error)
	}
	return res
}

func within(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if d := (got - want) / want; math.Abs(d) > tol {
		t.Errorf("%s: %.6g, want %.6g within %.3g %% (off by %+.4f %%)", what, got, want, 100*tol, 100*d)
	} else {
		t.Logf("%s: %.6g, ceiling %.6g (%+.4f %%)", what, got, want, 100*d)
	}
}

const atmLab = `
name: vatm
topology:
  nodes:
    h1: {kind: host, ipv4: 10.1.0.1/24}
    h2: {kind: host, ipv4: 10.1.0.2/24}
    sw: {kind: atm-switch}
  links:
    - {endpoints: ["h1:eth0", "sw:p1"], atm: {phy: oc3, aal: aal5, encap: llc}}
    - {endpoints: ["h2:eth0", "sw:p2"], atm: {phy: oc3, aal: aal5, encap: llc}}
`

// TestUDPStreamATM: UDP_STREAM over OC-3c AAL5 LLC/SNAP through an
// atm-switch, at sizes on both sides of cell boundaries (a datagram of p
// octets fills ceil((p+44)/48) cells), within 0.05 % of the cell ceiling.
func TestUDPStreamATM(t *testing.T) {
	l := lab(t, atmLab)
	for _, size := range []int{64, 100, 101, 484, 485, 1444, 1445, 4756, 4757, 9124, 9125, 9152} {
		res := measure(t, l, perf.Spec{Test: perf.UDPStream, Duration: 300 * time.Millisecond, Message: size})
		want, ok := theory.PathCeiling(l, "h1", "h2", perf.UDPStream, size)
		if !ok {
			t.Fatal("no ceiling")
		}
		within(t, fmt.Sprintf("OC-3c UDP %d B (%d lost)", size, res.Lost), res.ThroughputBps, want, 0.0005)
	}
}

const etherLab = `
name: veth
topology:
  nodes:
    h1: {kind: host, ipv4: 10.0.0.1/24}
    h2: {kind: host, ipv4: 10.0.0.2/24}
    sw1: {kind: switch, buffer: 128KiB}
  links:
    - endpoints: ["h1:eth0", "sw1:p1"]
      ethernet: {rate: %[1]s}
    - endpoints: ["h2:eth0", "sw1:p2"]
      ethernet: {rate: %[1]s}
`

// TestUDPStreamEthernet: the same on 10M, 100M and 1G Ethernet.
func TestUDPStreamEthernet(t *testing.T) {
	for _, rate := range []string{"10M", "100M", "1G"} {
		l := lab(t, fmt.Sprintf(etherLab, rate))
		for _, size := range []int{18, 64, 512, 1472} {
			d := 300 * time.Millisecond
			if rate == "10M" {
				d = time.Second
			}
			res := measure(t, l, perf.Spec{Test: perf.UDPStream, Duration: d, Message: size})
			want, _ := theory.PathCeiling(l, "h1", "h2", perf.UDPStream, size)
			within(t, fmt.Sprintf("%s UDP %d B (%d lost)", rate, size, res.Lost), res.ThroughputBps, want, 0.0005)
		}
	}
}

// TestTCPStream100M: TCP_STREAM on switched 100M Ethernet within 0.5 % of
// 94.15 Mbit/s (1448 octets of payload a 1538-octet wire frame).
func TestTCPStream100M(t *testing.T) {
	l := lab(t, fmt.Sprintf(etherLab, "100M"))
	res := measure(t, l, perf.Spec{Test: perf.TCPStream, Duration: 2 * time.Second})
	within(t, "100M TCP_STREAM", res.ThroughputBps, 94.15e6, 0.005)
}

var rrLab = labtest.Set(labtest.Lab("two-hosts", "vrr"), "topology.links[0].impair", "{delay: 5ms}")

// TestTCPRRDelay: TCP_RR with 1-octet messages over delay: 5ms each way
// within 0.5 % of 1/(10 ms + two frames' serialization).
func TestTCPRRDelay(t *testing.T) {
	l := lab(t, rrLab)
	res := measure(t, l, perf.Spec{Test: perf.TCPRR, Duration: 2 * time.Second})
	// A 1-octet segment: 14 + 20 + 32 (TCP with timestamps) + 1 = 67
	// octets, 91 on the wire with FCS, preamble and gap.
	ser := time.Duration(float64(91*8) / 100e6 * 1e9)
	within(t, "TCP_RR 1 B over 5 ms", res.TransactionsPerSec, 1/(10*time.Millisecond+2*ser).Seconds(), 0.005)
}

// TestTests runs every test once, short, and checks the figures are there.
func TestTests(t *testing.T) {
	l := lab(t, fmt.Sprintf(etherLab, "100M"))
	for _, test := range perf.Tests {
		if perf.IsAAL(test) {
			continue // they need a native PVC: native_test.go
		}
		if perf.IsSCTP(test) {
			continue // SCTP in virtual time has tests of its own
		}
		spec := perf.Spec{Test: test, Duration: 200 * time.Millisecond, Interval: 50 * time.Millisecond, SendBuf: 65536, RecvBuf: 65536}
		res := measure(t, l, spec)
		t.Logf("%s: %.2f Mbit/s, %.0f tx/s, elapsed %.4f s, %d intervals, sockbufs %+v %+v", test, res.ThroughputBps/1e6, res.TransactionsPerSec, res.Elapsed, len(res.Intervals), res.LocalSockBuf, res.RemoteSockBuf)
		switch test {
		case perf.TCPRR, perf.UDPRR, perf.TCPCRR:
			if res.Transactions == 0 || res.Latency == nil {
				t.Errorf("%s: no transactions", test)
			}
		default:
			if res.ThroughputBps < 50e6 {
				t.Errorf("%s: %.2f Mbit/s", test, res.ThroughputBps/1e6)
			}
		}
		if len(res.Intervals) < 3 {
			t.Errorf("%s: %d interval reports, want 4", test, len(res.Intervals))
		}
	}
	_ = context.Background
}

// TestCellLoss: a cell loss ratio p of 1e-3 on the sender's link loses a
// 1444-octet datagram's PDU (31 cells) with probability 1 - (1-p)^31, about
// 3.05 %; the measured ratio is within four standard deviations of it.
func TestCellLoss(t *testing.T) {
	l := lab(t, strings.Replace(atmLab, `"sw:p1"], atm: {phy: oc3, aal: aal5, encap: llc}}`,
		`"sw:p1"], atm: {phy: oc3, aal: aal5, encap: llc}, impair: {loss: 0.1%}}`, 1))
	const size, cells, p = 1444, 31, 1e-3
	res := measure(t, l, perf.Spec{Test: perf.UDPStream, Duration: 2 * time.Second, Message: size})
	want := 1 - math.Pow(1-p, cells)
	n := float64(res.MessagesSent)
	got := float64(res.Lost) / n
	sigma := math.Sqrt(want * (1 - want) / n)
	if math.Abs(got-want) > 4*sigma {
		t.Errorf("PDU loss %.4f %% of %d datagrams, want %.4f %% ± %.4f %% (4σ)", 100*got, res.MessagesSent, 100*want, 400*sigma)
	} else {
		t.Logf("PDU loss %.4f %% of %d datagrams; 1-(1-p)^%d = %.4f %% (σ %.4f %%)", 100*got, res.MessagesSent, cells, 100*want, 100*sigma)
	}
}
