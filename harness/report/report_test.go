package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/atmlab/atmlab/emulator/hist"
	"github.com/atmlab/atmlab/harness/labrun"
	"github.com/atmlab/atmlab/harness/perf"
	"github.com/atmlab/atmlab/harness/results"
	"github.com/atmlab/atmlab/internal/labtest"
	"github.com/atmlab/atmlab/topologies/labfile"
)

// A results folder with repetitions, an errored point and hardware figures
// renders tables with the right means, percentages and differences, and
// plots in both formats.
func TestWriteReport(t *testing.T) {
	dir := t.TempDir()
	var lines []string
	add := func(r labrun.Record) {
		b, _ := json.Marshal(r)
		lines = append(lines, string(b))
	}
	// mean 95 Mbit/s at 1472 B; the lateness row is the worse repetition's
	// at each quantile.
	late := []*hist.Summary{{Count: 9000, P50: 3100, P99: 41000, Max: 2300000}, {Count: 9100, P50: 2900, P99: 55500, Max: 800000}}
	for i, v := range []float64{94e6, 96e6} {
		add(labrun.Record{Point: labrun.Point{Experiment: "s", Tool: "atmlab", Test: perf.UDPStream, Size: 1472, Rep: i + 1},
			Result: perf.Result{Test: perf.UDPStream, ThroughputBps: v}, Ceiling: 95.709e6, Lateness: late[i]})
	}
	add(labrun.Record{Point: labrun.Point{Experiment: "s", Tool: "atmlab", Test: perf.UDPStream, Size: 512, Rep: 1},
		Result: perf.Result{Test: perf.UDPStream, ThroughputBps: 80e6}, Ceiling: 88.9e6, Flag: "below the ceiling"})
	add(labrun.Record{Point: labrun.Point{Experiment: "s", Tool: "atmlab", Test: perf.UDPStream, Size: 65535, Rep: 1},
		Result: perf.Result{Test: perf.UDPStream, Error: "message too large: 65535 bytes"}})
	add(labrun.Record{Point: labrun.Point{Experiment: "r", Tool: "atmlab", Test: perf.TCPRR, Size: 1, Rep: 1},
		Result: perf.Result{Test: perf.TCPRR, Transactions: 100, TransactionsPerSec: 7000,
			Intervals: []perf.Interval{{Start: 0, End: 1, TransactionsPerSec: 6900}, {Start: 1, End: 2, TransactionsPerSec: 7100}}}})
	add(labrun.Record{Point: labrun.Point{Experiment: "r", Tool: "atmlab", Test: perf.UDPRR, Size: 64, Rep: 1},
		Result: perf.Result{Test: perf.UDPRR, Transactions: 100, TransactionsPerSec: 5000, Confidence: &perf.ConfidenceResult{
			Confidence: perf.Confidence{Level: 99, Width: 0.05, Min: 3, Max: 10}, Iterations: 10, Mean: 5000, Achieved: 0.08, Interval: &[2]float64{4800, 5200}}}})
	add(labrun.Record{Point: labrun.Point{Experiment: "s", Tool: "atmlab", Test: perf.UDPStream, Size: 9000, Rep: 1},
		Result: perf.Result{Test: perf.UDPStream, ThroughputBps: 90e6, Confidence: &perf.ConfidenceResult{
			Confidence: perf.Confidence{Level: 95, Width: 0.01, Min: 3, Max: 10}, Iterations: 4, Mean: 90e6, Achieved: 0.008, Interval: &[2]float64{89.64e6, 90.36e6}, Met: true}}})
	os.WriteFile(filepath.Join(dir, "results.jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	labrun.WriteFigures(folder(t, dir), []labrun.HardwareFigure{
		{Experiment: "s", Test: perf.UDPStream, Size: 1472, Value: 11.41 * 8 * (1 << 20), As: "11.41 MiB/s", Source: "praktikum"},
		{Test: perf.TCPRR, Value: 3500, As: "3500 transactions/s", Source: "NT"},
		{Test: perf.TCPStream, Value: 94e6, As: "94 Mbit/s", Source: "not measured here"},
	})
	if err := Write(t.Context(), dir); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	for _, want := range []string{
		"| 1472 | 2 | 95.00 | 94.00 | 96.00 | 95.71 | 99.3 % | 3.1 / 55.5 / 2300 |",   // mean of two repetitions, of the ceiling
		"| 512 | 1 | 80.00 | 80.00 | 80.00 | 88.90 | 90.0 % |  | below the ceiling |", // no lateness recorded
		"below the ceiling",
		"message too large: 65535 bytes",
		"| 1 | 1 | 7000.00 |",
		"| 64 | 1 | 5000.00 | 5000.00 | 5000.00 |  |  |  | 99 % confidence within ±2.5 %: **not met** after 10 runs (±4.00 %, interval 4800.00–5200.00) |",
		"| 9000 | 1 | 90.00 | 90.00 | 90.00 |  |  |  | 95 % confidence within ±0.5 %: met after 4 runs (±0.40 %, interval 89.64–90.36) |",
		// 11.41 MiB/s = 95.71 Mbit/s; emulated 95.00: -0.7 %.
		"| UDP_STREAM | s | 1472 | 95.71 Mbit/s | 11.41 MiB/s | 95.00 Mbit/s | -0.7 % | praktikum |",
		"| TCP_RR |  | 1 | 3500.00 transactions/s | 3500 transactions/s | 7000.00 transactions/s | +100.0 % | NT |",
		"not measured",
	} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q:\n%s", want, md)
		}
	}
	for _, f := range []string{"throughput.png", "throughput.svg", "transactions.png", "transactions.svg", "intervals.png", "intervals.svg", "report.html"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() < 500 {
			t.Errorf("%s: %v", f, err)
		}
	}
	html, _ := os.ReadFile(filepath.Join(dir, "report.html"))
	if !strings.Contains(string(html), "<svg") || !strings.Contains(string(html), "Compared with hardware") {
		t.Error("report.html lacks the inline plots or the comparison")
	}
}

// With the lab file beside the results, the theory line has the ceiling at
// every byte between the sizes measured: the AAL5 step after UDP 1300
// (28 -> 29 cells) shows although only 1300 and 1348 were measured.
func TestTheoryLine(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "lab.yaml"), []byte(labtest.Lab("two-hosts-atm", "t")), 0o644)
	var recs []labrun.Record
	for _, size := range []int{1300, 1348} {
		recs = append(recs, labrun.Record{Point: labrun.Point{Variant: "base", Experiment: "s", Tool: "atmlab", Test: perf.UDPStream, Size: size, From: "h1", To: "h2"},
			Ceiling: 131e6, Result: perf.Result{Test: perf.UDPStream, ThroughputBps: 131e6}})
	}
	ss := group(recs)
	lab, err := labfile.Load(filepath.Join(dir, "lab.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	theoryLinesOf(folderLabs{lab: lab}.variant, ss)
	th := ss[0].Theory
	if len(th) < 2 || th[0].X != 1300 || th[len(th)-1].X != 1348 {
		t.Fatalf("theory line from %v to %v", th[0], th[len(th)-1])
	}
	if !(valueAt(th, 1301) < valueAt(th, 1300)*0.97) {
		t.Errorf("no step after 1300: %.2f then %.2f Mbit/s", valueAt(th, 1300), valueAt(th, 1301))
	}
	// Without the lab file there is no theory line, only the points' ceilings.
	ss = group(recs)
	theoryLinesOf(folderLabs{}.variant, ss)
	if ss[0].Theory != nil {
		t.Error("a theory line without a lab file")
	}
}

// folder opens dir as a results folder to write into, closed at the
// test's end.
func folder(t *testing.T, dir string) *results.Folder {
	t.Helper()
	f, err := results.Create(dir, results.Force)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}
