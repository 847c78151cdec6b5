package report

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot/plotter"

	"github.com/atmlab/atmlab/harness/labrun"
	"github.com/atmlab/atmlab/harness/perf"
	"github.com/atmlab/atmlab/harness/theory"
	"github.com/atmlab/atmlab/internal/labtest"
	"github.com/atmlab/atmlab/topologies/labfile"
)

// valueAt is what a line drawn through xys shows at x.
func valueAt(xys plotter.XYs, x float64) float64 {
	for i := 1; i < len(xys); i++ {
		a, b := xys[i-1], xys[i]
		if a.X <= x && x <= b.X {
			return a.Y + (b.Y-a.Y)*(x-a.X)/(b.X-a.X)
		}
	}
	return math.NaN()
}

// sweepLab is atm-sweep's path: two hosts through an atm-switch on OC-3c,
// AAL5, LLC/SNAP, and an AAL3/4 variant.
var sweepLab = labtest.Lab("two-hosts-atm-switch", "atmsweep", `variants:
  - name: aal34
    set:
      - {link: "h1:eth0", aal: aal34}
      - {link: "h2:eth0", aal: aal34}
`)

func sweepRecords(variant string, sizes ...int) []labrun.Record {
	var recs []labrun.Record
	for _, size := range sizes {
		recs = append(recs, labrun.Record{Point: labrun.Point{Variant: variant, Experiment: "sawtooth", Tool: "iperf3", Test: perf.UDPStream, Size: size, From: "h1", To: "h2"},
			Ceiling: 120e6, Result: perf.Result{Test: perf.UDPStream, ThroughputBps: 120e6}})
	}
	return recs
}

// The sawtooth's ceiling line is exact at every byte: drawn straight
// between the points it keeps, it shows at each size from the smallest
// to the largest measured what theory (atmlab calc's) gives there, so
// OC-3c AAL5 LLC's step between 484 bytes (11 cells) and 485 (12) falls
// within one byte, where no size was measured.
func TestCeilingLineExactAtEveryByte(t *testing.T) {
	lab, err := labfile.Parse("atm-sweep.yaml", []byte(sweepLab))
	if err != nil {
		t.Fatal(err)
	}
	ss := group(sweepRecords("base", 100, 340, 533))
	theoryLinesOf(folderLabs{lab: lab}.variant, ss)
	line := ss[0].Theory
	if line[0].X != 100 || line[len(line)-1].X != 533 {
		t.Fatalf("line from %v to %v, want 100 to 533", line[0], line[len(line)-1])
	}
	for size := 100; size <= 533; size++ {
		want, ok := theory.PathCeiling(lab, "h1", "h2", perf.UDPStream, size)
		if got := valueAt(line, float64(size)); !ok || math.Abs(got-want/1e6) > 1e-9*want/1e6 {
			t.Fatalf("at %d bytes the line shows %.6f Mbit/s, theory %.6f", size, got, want/1e6)
		}
	}
	phy, aal, encap := lab.Links[0].ATM.Layers()
	c484, _ := theory.ATMCeiling(phy, aal, encap, 9180, 484, "udp")
	c485, _ := theory.ATMCeiling(phy, aal, encap, 9180, 485, "udp")
	if c484.WireBytes != 11*53 || c485.WireBytes != 12*53 {
		t.Fatalf("484 and 485 bytes take %v and %v octets, want 11 and 12 cells", c484.WireBytes, c485.WireBytes)
	}
	if at, next := valueAt(line, 484), valueAt(line, 485); at != c484.Goodput/1e6 || next != c485.Goodput/1e6 || next > 0.93*at {
		t.Errorf("step at 484/485: line %.3f then %.3f Mbit/s, theory %.3f then %.3f", at, next, c484.Goodput/1e6, c485.Goodput/1e6)
	}
	// and the line is short: a point at each end of each tooth and one
	// each 5 % of size, not one a byte
	if len(line) > 60 {
		t.Errorf("line keeps %d points of 434 bytes", len(line))
	}
}

// No point reads above its ceiling without a reason: a record 0.3 % over
// that the run did not flag (a folder from before runs flagged every such
// point) gets a note in the report that says it is above the ceiling and
// why; one the run flagged for something else keeps its flag and gets the
// note too; one below its ceiling gets none.
func TestPointAboveCeilingIsFlagged(t *testing.T) {
	dir := t.TempDir()
	recs := sweepRecords("base", 100, 340, 533)
	for i := range recs {
		recs[i].Ceiling = 120e6
	}
	recs[0].Result.ThroughputBps = 120e6 * 1.003
	recs[1].Result.ThroughputBps = 120e6 * 1.02
	recs[1].Flag = "hosts dropped 3 frames at their TAPs: the emulator fell behind"
	recs[2].Result.ThroughputBps = 120e6 * 0.999
	writeRecords(t, dir, recs)
	if err := Write(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	for _, line := range strings.Split(string(md), "\n") {
		switch {
		case strings.HasPrefix(line, "| 100 |"):
			if !strings.Contains(line, "100.3 % of the ceiling, above it") || !strings.Contains(line, "iperf3's figure is the mean of the receiver's one-second reports") {
				t.Errorf("a point 0.3 %% over its ceiling: %q, want a flag that says so and why", line)
			}
		case strings.HasPrefix(line, "| 340 |"):
			if !strings.Contains(line, "TAPs") || !strings.Contains(line, "102.0 % of the ceiling, above it") {
				t.Errorf("a point flagged for its TAPs, 2 %% over: %q, want its flag and the note", line)
			}
		case strings.HasPrefix(line, "| 533 |"):
			if strings.Contains(line, "above") {
				t.Errorf("a point under its ceiling: %q", line)
			}
		}
	}
}

// The sawtooth figure's title names the path (its hosts), the PHY, the
// AAL, the encapsulation and the test; a variant's figure names its own.
func TestFigureTitleNamesPathAndTest(t *testing.T) {
	lab, err := labfile.Parse("atm-sweep.yaml", []byte(sweepLab))
	if err != nil {
		t.Fatal(err)
	}
	labs := folderLabs{lab: lab}
	for _, c := range []struct {
		variant string
		want    []string
	}{
		{"base", []string{"sawtooth", "UDP_STREAM", "iperf3", "h1 → h2", "OC-3c", "AAL5", "LLC/SNAP"}},
		{"aal34", []string{"UDP_STREAM", "h1 → h2", "OC-3c", "AAL3/4", "LLC/SNAP"}},
	} {
		ss := group(sweepRecords(c.variant, 100, 340))
		theoryLinesOf(labs.variant, ss)
		title := figureTitle("Throughput against message size", ss)
		for _, w := range c.want {
			if !strings.Contains(title, w) {
				t.Errorf("%s: title %q lacks %q", c.variant, title, w)
			}
		}
	}
}

// The point tables' columns are plain words, explained once after them.
func TestTablesInPlainWords(t *testing.T) {
	ss := group(sweepRecords("base", 100))
	md := pointTables(ss)
	for _, want := range []string{"| message size (bytes) | runs | mean Mbit/s |", "theoretical ceiling Mbit/s", "share of the ceiling",
		"emulator late by, µs: typical / 1 frame in 100 / worst", "## Reading the tables", "- share of the ceiling: the mean divided by the ceiling", "- emulator late by: "} {
		if !strings.Contains(md, want) {
			t.Errorf("tables lack %q:\n%s", want, md)
		}
	}
	for _, jargon := range []string{"lateness", "p50", "p99", "| n |"} {
		if strings.Contains(md, jargon) {
			t.Errorf("tables say %q:\n%s", jargon, md)
		}
	}
}

// writeRecords writes recs as a results folder's results.jsonl.
func writeRecords(t *testing.T, dir string, recs []labrun.Record) {
	t.Helper()
	var b strings.Builder
	for _, r := range recs {
		j, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(append(j, '\n'))
	}
	if err := os.WriteFile(filepath.Join(dir, "results.jsonl"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}
