package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/atmlab/atmlab/harness/labrun"
	"github.com/atmlab/atmlab/harness/perf"
	"github.com/atmlab/atmlab/internal/labtest"
	"github.com/atmlab/atmlab/topologies/study"
)

func rec(variant, exp, test string, size, buf int, fig float64) labrun.Record {
	r := labrun.Record{Point: labrun.Point{Variant: variant, Experiment: exp, Tool: "atmlab", Test: test, Size: size, SockBuf: buf}, Result: perf.Result{Test: test}}
	if isRR(test) {
		r.Result.TransactionsPerSec = fig
	} else {
		r.Result.ThroughputBps = fig
	}
	return r
}

// Verdicts take the mean of repetitions, the best size when none is named,
// and judge the change against its range, inclusive.
func TestJudge(t *testing.T) {
	recs := []labrun.Record{
		rec("base", "sw", perf.UDPStream, 512, 0, 88e6), rec("base", "sw", perf.UDPStream, 1460, 0, 95e6), rec("base", "sw", perf.UDPStream, 1460, 0, 96e6),
		rec("nt", "hub", perf.UDPStream, 512, 0, 61e6), rec("nt", "hub", perf.UDPStream, 1460, 0, 80e6),
		rec("nt", "hub", perf.TCPRR, 1, 0, 4000), rec("nt", "sw", perf.TCPRR, 1, 0, 8000),
	}
	recs = append(recs, labrun.Record{Point: labrun.Point{Variant: "nt", Experiment: "hub", Tool: "atmlab", Test: perf.UDPStream, Size: 8192}, Error: "killed"})
	recs[5].HostDrops = 12 // the emulator fell behind on one repetition of the hub's RR
	sel := func(variant, exp, test string, size int) study.Selector {
		return study.Selector{Variant: variant, Experiment: exp, Test: test, Tool: "atmlab", Size: size, SockBuf: -1}
	}
	sw := sel("base", "sw", perf.UDPStream, 0)
	fs := []*study.Finding{
		{Measured: sel("nt", "hub", perf.UDPStream, 0), Against: &sw, Change: [2]float64{-20, -5}},                                             // 80 vs 95.5: -16.2 %
		{Measured: sel("nt", "hub", perf.TCPRR, 1), Against: ptr(sel("nt", "sw", perf.TCPRR, 1)), Change: [2]float64{-40, -10}},                // -50 %: outside
		{Measured: sel("base", "sw", perf.UDPStream, 1460), Hardware: &study.Reference{Value: 95.5, Unit: "Mbit/s"}, Change: [2]float64{0, 0}}, // exactly 0
		{Measured: sel("base", "gone", perf.UDPStream, 0), Against: &sw, Change: [2]float64{-1, 1}},
	}
	vs := Judge(fs, recs)
	want := []struct {
		measured, baseline, change float64
		status                     string
		limited                    bool
	}{
		{80e6, 95.5e6, -16.230, "reproduced", false},
		{4000, 8000, -50, "not reproduced", true},
		{95.5e6, 95.5e6, 0, "reproduced", false},
		{0, 95.5e6, 0, "not measured", false},
	}
	for i, w := range want {
		v := vs[i]
		if v.Measured != w.measured || v.Baseline != w.baseline || v.Status != w.status || v.Limited != w.limited || v.Change < w.change-0.001 || v.Change > w.change+0.001 {
			t.Errorf("finding %d: %+v; want %+v", i, v, w)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// A claim whose point was held by a userspace SCTP stack's CPU (flagged
// stack_cpu) is not judged, its change still computed and the stack's CPU
// named; a claim on the same figures without the flag is judged.
func TestJudgeLeavesAClaimOnAStackCPUBoundPointNotJudged(t *testing.T) {
	def, big := rec("rtt-10ms", "sctp", perf.SCTPStream, 8952, 0, 450e6), rec("rtt-10ms", "sctp-32m", perf.SCTPStream, 8952, 33554432, 650e6)
	flagged := big
	flagged.ShortBy = []string{labrun.ShortStackCPU, labrun.ShortLateness}
	flagged.Result.CPU.Local, flagged.Result.CPU.Remote = 0.73, 0.48
	sel := func(exp string) study.Selector {
		return study.Selector{Variant: "rtt-10ms", Experiment: exp, Test: perf.SCTPStream, Tool: "atmlab", SockBuf: -1}
	}
	f := []*study.Finding{{Measured: sel("sctp"), Against: ptr(sel("sctp-32m")), Change: [2]float64{-50, -20}}}
	judged, notJudged := Judge(f, []labrun.Record{def, big})[0], Judge(f, []labrun.Record{def, flagged})[0]
	if judged.Status != "reproduced" || judged.Why != "" {
		t.Errorf("without the flag: %q %q; want reproduced", judged.Status, judged.Why)
	}
	want := "a point it rests on was held by the userspace SCTP stack's CPU (stack_cpu: its two ends used 1.21 of a core together), not by the path"
	if notJudged.Status != "not judged" || notJudged.Why != want || notJudged.Change > -30.76 || notJudged.Change < -30.77 || !notJudged.Limited {
		t.Errorf("with the flag: %q %q, change %.3f, limited %v; want not judged, %q, -30.769, limited", notJudged.Status, notJudged.Why, notJudged.Change, notJudged.Limited, want)
	}
	md := findingsSection(f, []labrun.Record{def, flagged})
	for _, w := range []string{"not judged: " + want, "0 of 1 claims reproduced in this run.\n1 not judged in real time"} {
		if !strings.Contains(md, w) {
			t.Errorf("the claims' table lacks %q:\n%s", w, md)
		}
	}
}

// The report renders the claims of the lab file copied into the results.
func TestFindingsInReport(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "lab.yaml"), []byte(labtest.Lab("two-hosts", "f", `notes: "The study counts 48 octets of headers."
experiments:
  - {name: sw, from: h1, to: h2, tests: [UDP_STREAM], sizes: [1460]}
variants:
  - {name: far, set: [{link: "h1:eth0", delay: 10ms}]}
figures:
  - {name: by-variant, title: "UDP, near and far", experiments: [sw], x: variant}
  - {name: by-size, title: "UDP", experiments: [sw], tests: [UDP_STREAM]}
findings:
  - claim: "UDP | fills the wire"
    study: "11.41 MiB/s"
    measured: {experiment: sw, test: UDP_STREAM}
    hardware: {value: 11.41, unit: MiB/s}
    change: [-2, 2]
    why: "the link is the bound"
  - claim: "equal to itself"
    measured: {experiment: sw, test: UDP_STREAM, size: 1460}
    against: {experiment: sw, test: UDP_STREAM}
    change: [0, 0]
    why: "the same point"
`)), 0o644)
	b, _ := json.Marshal(rec("base", "sw", perf.UDPStream, 1460, 0, 95.6e6))
	b2, _ := json.Marshal(rec("far", "sw", perf.UDPStream, 1460, 0, 95.1e6))
	os.WriteFile(filepath.Join(dir, "results.jsonl"), append(append(b, '\n'), append(b2, '\n')...), 0o644)
	if err := Write(t.Context(), dir); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	for _, want := range []string{
		"## Notes\n\nThe study counts 48 octets of headers.\n",
		"## The study's findings, claim by claim",
		"| 1 | UDP \\| fills the wire | 11.41 MiB/s | sw UDP_STREAM, best size: 95.60 Mbit/s; against hardware 11.41 MiB/s | -0.1 % (-2 … +2 %) | **reproduced** | the link is the bound |",
		"| 2 | equal to itself |  | sw UDP_STREAM 1460 B: 95.60 Mbit/s; against sw UDP_STREAM, best size: 95.60 Mbit/s | +0.0 % (+0 … +0 %) | **reproduced** | the same point |",
		"2 of 2 claims reproduced",
		"![by-variant](by-variant.png)", "![by-size](by-size.png)",
	} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q:\n%s", want, md)
		}
	}
	for _, f := range []string{"by-variant.png", "by-size.svg"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() < 1000 {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// The grades name the stack that measured each row: an SCTP test's own
// implementation, else the kernel's (real time) or netstack's (virtual).
func TestGradesSection(t *testing.T) {
	g := &study.Grades{Bandwidth: [4]float64{900, 800, 700, 600}, CPU: [4]float64{19, 39, 59, 79},
		Study: []study.Graded{{Name: "netperf 2.4.3 SCTP", Bandwidth: 629, CPU: 73}}}
	a, b := rec("base", "wan", perf.TCPStream, 8948, 0, 950e6), rec("base", "wan", perf.TCPStream, 8948, 0, 960e6)
	a.Result.CPU.Local, b.Result.CPU.Local = 0.30, 0.34
	c := rec("base", "wan", perf.TCPStream, 8948, 0, 500e6)
	c.Tool, c.Result.CPU.Local = "iperf", 0.9
	d := rec("base", "wan", perf.SCTPStream, 8952, 0, 990e6)
	d.Clock, d.Result.Implementation = "virtual", "atmlab vsctp (RFC 4960 model, virtual time)"
	md := gradesSection(g, []labrun.Record{a, b, c, d})
	for _, want := range []string{"| base | wan | atmlab | TCP_STREAM | kernel | 2 | 955.0 | A | 32 % | B |", "| the study | | netperf 2.4.3 SCTP | | | | 629.0 | D | 73 % | D |",
		"| base | wan | iperf | TCP_STREAM | kernel | 1 | 500.0 | F | 90 % | F |", "| base | wan | atmlab | SCTP_STREAM | atmlab vsctp (RFC 4960 model, virtual time) | 1 | 990.0 | A | 0 % | A |"} {
		if !strings.Contains(md, want) {
			t.Errorf("grades lack %q:\n%s", want, md)
		}
	}
}
