//go:build integration

package test

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/atmlab/atmlab/emulator/units"
	"github.com/atmlab/atmlab/harness/perf"
	"github.com/atmlab/atmlab/harness/theory"
)

// Two hosts on a 100 Mbit/s link with Sandia's jumbo frames (at 1 Gbit/s
// pion's userspace SCTP runs out of CPU on a two-core machine first):
//
//	h1 --100M, MTU 9000-- h2
const sctpLab = `
name: NAME
topology:
  nodes:
    h1: {kind: host, ipv4: 10.0.0.1/24, mtu: 9000}
    h2: {kind: host, ipv4: 10.0.0.2/24, mtu: 9000}
  links:
    - {endpoints: ["h1:eth0", "h2:eth0"], ethernet: {rate: 100M}}
`

// sctpResult is what the test reads of a perf result.
type sctpResult struct {
	Throughput     float64 `json:"throughput_bps"`
	Sent           uint64  `json:"bytes_sent"`
	Received       uint64  `json:"bytes_received"`
	Transactions   uint64  `json:"transactions"`
	Implementation string  `json:"implementation"`
	CPU            struct {
		Local, Remote float64
	} `json:"cpu"`
	Intervals []perf.Interval `json:"intervals"`
}

// In real time, SCTP_STREAM between two hosts' namespaces reads within
// sctpTolerance of the SCTP ceiling of its implementation's packets,
// everything sent arrives, and SCTP_RR gets its answers; the result names
// the stack. tshark decodes a capture of the stream as SCTP DATA chunks
// with correct CRC32c checksums.
func TestSCTPStreamRealTime(t *testing.T) {
	requireRoot(t, "tshark")
	r := up(t, sctpLab)
	r.perfServer("h2")
	const msg = 16384
	out := r.exec("h1", atmlab, "perf", "client", "-H", "10.0.0.2", "-t", "SCTP_STREAM", "-l", "4", "-i", "0.5s", "-m", "16384", "-o", "json")
	var res sctpResult
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("SCTP_STREAM: %v\n%s", err, out)
	}
	mtu := perf.SCTPPacketMTU(res.Implementation, 9000)
	c, err := theory.EthernetCeiling(units.BitRate(100e6), mtu, msg, "sctp")
	if err != nil {
		t.Fatal(err)
	}
	// The steady rate: the median of the half-second intervals after the
	// first second (the first fills the 4 MiB send buffer; the client
	// counts what it writes, which a full buffer paces at the acks).
	var ivs []float64
	for _, iv := range res.Intervals {
		if iv.Start >= 1 && iv.End-iv.Start > 0.45 {
			ivs = append(ivs, iv.Bps)
		}
	}
	steadyBps := 0.0
	if len(ivs) > 0 {
		slices.Sort(ivs)
		steadyBps = ivs[len(ivs)/2]
	}
	t.Logf("SCTP_STREAM over %s: %.2f Mbit/s (%+.2f %%), steady %.2f (%+.2f %%), ceiling %.2f at IP MTU %d; CPU %.0f %% / %.0f %% of a core",
		res.Implementation, res.Throughput/1e6, 100*(res.Throughput/c.Goodput-1), steadyBps/1e6, 100*(steadyBps/c.Goodput-1),
		c.Goodput/1e6, mtu, 100*res.CPU.Local, 100*res.CPU.Remote)
	if res.Implementation == "" || res.Received != res.Sent {
		t.Errorf("SCTP_STREAM: implementation %q, %d octets sent, %d received", res.Implementation, res.Sent, res.Received)
	}
	if !within(steadyBps, c.Goodput, sctpSteadyTolerance) || !within(res.Throughput, c.Goodput, sctpTolerance) {
		t.Errorf("SCTP_STREAM: %.2f Mbit/s steady, %.2f over the run; want the ceiling %.2f within %.0f %% and %.0f %%",
			steadyBps/1e6, res.Throughput/1e6, c.Goodput/1e6, 100*sctpSteadyTolerance, 100*sctpTolerance)
	}

	out = r.exec("h1", atmlab, "perf", "client", "-H", "10.0.0.2", "-t", "SCTP_RR", "-l", "1", "-r", "64,1024", "-o", "json")
	var rr sctpResult
	if json.Unmarshal(out, &rr) != nil || rr.Transactions == 0 {
		t.Errorf("SCTP_RR: %s", out)
	}

	pcap := filepath.Join(t.TempDir(), "sctp.pcap")
	capture := exec.Command(atmlab, "capture", r.name, "h2:eth0", "-w", pcap, "-c", "60")
	if err := capture.Start(); err != nil {
		t.Fatal(err)
	}
	captureAttached(t, pcap)
	r.exec("h1", atmlab, "perf", "client", "-H", "10.0.0.2", "-t", "SCTP_STREAM", "-l", "0.3", "-m", "16384")
	waitOrKill(t, capture, 10*time.Second)
	dec, err := exec.Command("tshark", "-r", pcap, "-o", "sctp.checksum:crc-32c", "-Y", "sctp.data_tsn", "-V").CombinedOutput()
	text := string(dec)
	chunks := len(regexp.MustCompile(`\n\s+DATA chunk \(ordered, (complete|first|middle|last) segment, TSN: \d+, SID: 0, SSN: \d+, PPID: \d+, payload length: \d+ bytes\)`).FindAllStringIndex(text, -1))
	good := strings.Count(text, "[Checksum Status: Good]")
	if err != nil || chunks < 20 || good < chunks || strings.Contains(text, "Malformed") {
		t.Errorf("tshark on a capture of the SCTP stream: %v, %d DATA chunks, %d good checksums\n%.3000s", err, chunks, good, text)
	}
	if i := strings.Index(text, "Stream Control Transmission Protocol"); i >= 0 {
		t.Logf("tshark -V, a packet of the stream:\n%s", text[i:min(i+1200, len(text))])
	}
}

// How far from its ceiling an SCTP stream may read, from runs under the
// traffic lock at load average 9-13: pion's steady intervals read
// 0.2-0.5 % short at 100 Mbit/s and MTU 9000 (the 1 % the other
// real-time tests allow), the whole run (netperf's figure) 1.5-2.3 %
// short: the flush drains the 4 MiB send buffer and then waits for the
// server's stream reset, and the first round trips are not at line rate.
const (
	sctpSteadyTolerance = 0.01
	sctpTolerance       = 0.03
)
