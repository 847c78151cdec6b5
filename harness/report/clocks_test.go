package report

import (
	"strings"
	"testing"

	"github.com/atmlab/atmlab/harness/labrun"
	"github.com/atmlab/atmlab/harness/perf"
	"github.com/atmlab/atmlab/topologies/study"
)

// virt is a record measured in virtual time.
func virt(r labrun.Record) labrun.Record {
	r.Clock, r.Stack = "virtual", "gvisor.dev/gvisor test"
	return r
}

// After --clock both, every claim has a verdict per clock, judged on that
// clock's records alone; a claim on an iperf3 point (skipped in virtual
// time) or with real_host: is marked real hosts only, with the reason.
func TestFindingsByClock(t *testing.T) {
	sel := func(exp, tool string, size int) study.Selector {
		return study.Selector{Variant: "base", Experiment: exp, Test: perf.UDPStream, Tool: tool, Size: size, SockBuf: -1}
	}
	skipped := virt(rec("base", "ip3", perf.UDPStream, 1460, 0, 0))
	skipped.Tool, skipped.Result.Error = "iperf3", "skipped: iperf3 runs only in real time (a real binary on a real host); run with --clock real"
	real3 := rec("base", "ip3", perf.UDPStream, 1460, 0, 94e6)
	real3.Tool = "iperf3"
	recs := []labrun.Record{
		rec("base", "sw", perf.UDPStream, 1460, 0, 90e6), rec("base", "sw", perf.UDPStream, 512, 0, 80e6),
		virt(rec("base", "sw", perf.UDPStream, 1460, 0, 95.6e6)), virt(rec("base", "sw", perf.UDPStream, 512, 0, 88e6)),
		real3, skipped,
	}
	fs := []*study.Finding{
		{Claim: "fills the wire", Measured: sel("sw", "atmlab", 1460), Hardware: &study.Reference{Value: 95.6, Unit: "Mbit/s"}, Change: [2]float64{-1, 1}, Why: "w1"},
		{Claim: "iperf3 agrees", Measured: sel("ip3", "iperf3", 0), Against: ptr(sel("sw", "atmlab", 1460)), Change: [2]float64{0, 10}, Why: "w2"},
		{Claim: "small is slower", Measured: sel("sw", "atmlab", 512), Against: ptr(sel("sw", "atmlab", 1460)), Change: [2]float64{-15, -5}, Why: "w3", RealHost: "Linux's TCP"},
	}
	md := findingsSection(fs, recs)
	for _, want := range []string{
		"| # | claim | the study | atmlab, real time | change (range) | verdict | atmlab, virtual time | change (range) | verdict | why |",
		"| 1 | fills the wire |  | sw UDP_STREAM 1460 B: 90.00 Mbit/s; against hardware 95.6 Mbit/s | -5.9 % (-1 … +1 %) | not reproduced | sw UDP_STREAM 1460 B: 95.60 Mbit/s; against hardware 95.6 Mbit/s | +0.0 % (-1 … +1 %) | **reproduced** | w1 |",
		"| 2 | iperf3 agrees |  | ip3 UDP_STREAM by iperf3, best size: 94.00 Mbit/s; against sw UDP_STREAM 1460 B: 90.00 Mbit/s | +4.4 % (+0 … +10 %) | **reproduced** | ip3 UDP_STREAM by iperf3, best size: not measured; against sw UDP_STREAM 1460 B: 95.60 Mbit/s | (+0 … +10 %) | not measured; *real hosts only*: skipped: iperf3 runs only in real time",
		"| -11.1 % (-15 … -5 %) | **reproduced** | sw UDP_STREAM 512 B: 88.00 Mbit/s; against sw UDP_STREAM 1460 B: 95.60 Mbit/s | -7.9 % (-15 … -5 %) | **reproduced**; *real hosts only*: Linux's TCP | w3 |",
		"2 of 3 claims reproduced in real time.\n1 of 1 claims reproduced in virtual time; 2 rest on real hosts only.\n",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("findings lack %q:\n%s", want, md)
		}
	}
	// One clock: the table as it always was.
	if md := findingsSection(fs[:1], recs[:2]); !strings.Contains(md, "| # | claim | the study | atmlab | change (range) | verdict | why |") || !strings.Contains(md, "0 of 1 claims reproduced in this run.") {
		t.Errorf("real time only:\n%s", md)
	}
}

// The side-by-side table: each point's mean per clock and the difference;
// a point one clock could not run shows why.
func TestClocksSection(t *testing.T) {
	skipped := virt(rec("base", "ip3", perf.UDPStream, 1460, 0, 0))
	skipped.Tool, skipped.Result.Error = "iperf3", "skipped: iperf3 runs only in real time; run with --clock real"
	real3 := rec("base", "ip3", perf.UDPStream, 1460, 0, 94e6)
	real3.Tool = "iperf3"
	recs := []labrun.Record{
		rec("base", "sw", perf.UDPStream, 1460, 0, 90e6), rec("base", "sw", perf.UDPStream, 1460, 0, 92e6),
		virt(rec("base", "sw", perf.UDPStream, 1460, 0, 95.6e6)),
		rec("base", "rr", perf.TCPRR, 1, 0, 8000), virt(rec("base", "rr", perf.TCPRR, 1, 0, 10000)),
		real3, skipped,
	}
	stood := virt(rec("base", "ip3b", perf.UDPStream, 1460, 0, 95e6))
	stood.Tool, stood.MeasuredBy = "iperf3", "atmlab"
	real3b := real3
	real3b.Experiment = "ip3b"
	recs = append(recs, real3b, stood)
	md := clocksTable(recs)
	for _, want := range []string{
		"| base | sw | UDP_STREAM | atmlab | 1460 | 0 | 91.00 Mbit/s | 95.60 Mbit/s | +5.1 % |",
		"| base | rr | TCP_RR | atmlab | 1 | 0 | 8000.00/s | 10000.00/s | +25.0 % |",
		"| base | ip3 | UDP_STREAM | iperf3 | 1460 | 0 | 94.00 Mbit/s | skipped: iperf3 runs only in real time; run with --clock real |  |",
		"| base | ip3b | UDP_STREAM | iperf3 | 1460 | 0 | 94.00 Mbit/s | 95.00 Mbit/s (by atmlab) | +1.1 % |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("side by side lacks %q:\n%s", want, md)
		}
	}
	if clocksTable(recs[:2]) != "" {
		t.Error("a real-time run has a side-by-side section")
	}
	// Sections that average points are rendered per clock.
	if s := byClock(recs, func(rs []labrun.Record) string { return "## n\n" + strings.Repeat("x", len(rs)) + "\n" }); s != "## n (real time)\nxxxxx\n## n (virtual time)\nxxxx\n" {
		t.Errorf("byClock: %q", s)
	}
}
