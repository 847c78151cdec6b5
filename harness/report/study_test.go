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
