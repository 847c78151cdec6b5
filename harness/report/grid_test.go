package report

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/atmlab/atmlab/harness/labrun"
	"github.com/atmlab/atmlab/harness/perf"
	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/labfile"
)

// A grid's report: a figure of each kind against each parameter and a
// table of the points in grid order, each the best size's mean.
func TestGridReport(t *testing.T) {
	lab, err := labfile.Parse("g.yaml", []byte(`name: g
topology:
  nodes: {h1: {kind: host, ipv4: 10.0.0.1/24}, h2: {kind: host, ipv4: 10.0.0.2/24}}
  links: [{endpoints: ["h1:eth0", "h2:eth0"]}]
experiments:
  - {name: e, from: h1, to: h2, tests: [TCP_STREAM, TCP_RR], sizes: [1, 1448], repetitions: 2}
sweep:
  - {link: "h1:eth0", rate: [10M, 100M]}
  - {link: "h1:eth0", delay: [0s, 5ms, 20ms]}
`))
	if err != nil {
		t.Fatal(err)
	}
	var recs []labrun.Record
	for i, v := range lab.Measured() {
		if v == "rate=100M,delay=20ms" {
			continue // not measured (a shard missing)
		}
		for _, test := range []string{perf.TCPStream, perf.TCPRR} {
			for _, size := range []int{1, 1448} {
				for rep := 1; rep <= 2; rep++ {
					r := labrun.Record{Point: labrun.Point{Variant: v, Experiment: "e", Tool: "atmlab", Test: test, Size: size, Rep: rep}}
					r.Result.Test = test
					// streams: (i+1) Mbit/s at 1448 B, ±1 over repetitions, less at 1 B
					r.Result.ThroughputBps = float64(i+1)*1e6 + float64(2*rep-3)*1e6 - float64(1448-size)*1e3
					r.Result.TransactionsPerSec = 1000/float64(i+1) + float64(size)/1000
					if v == "rate=10M,delay=5ms" && test == perf.TCPRR {
						r.Error = "timeout"
					}
					recs = append(recs, r)
				}
			}
		}
	}
	dir := t.TempDir()
	p := &page{dir: folder(t, dir), lab: lab, recs: recs}
	figs, err := gridFigures(p)
	if err != nil {
		t.Fatal(err)
	}
	table, _ := gridSection(p)
	if want := []string{"grid-rate", "grid-delay", "grid-rate-rr", "grid-delay-rr"}; !slices.Equal(figs, want) {
		t.Fatalf("figures %q, want %q", figs, want)
	}
	for _, f := range figs {
		for _, ext := range []string{".png", ".svg"} {
			if st, err := os.Stat(filepath.Join(dir, f+ext)); err != nil || st.Size() < 1000 {
				t.Errorf("%s%s: %v", f, ext, err)
			}
		}
	}
	want := "## The grid\n\n5 points of 6; each figure is the mean of its repetitions at the size where it is highest.\n\n" +
		"| rate | delay | e · TCP_STREAM · atmlab (Mbit/s) | e · TCP_RR · atmlab (transactions/s) |\n|---|---|---:|---:|\n" +
		"| 10M | 0s | 1.00 | 1001.45 |\n" +
		"| 10M | 5ms | 2.00 | error |\n" +
		"| 10M | 20ms | 3.00 | 334.78 |\n" +
		"| 100M | 0s | 4.00 | 251.45 |\n" +
		"| 100M | 5ms | 5.00 | 201.45 |\n\n"
	if table != want {
		t.Fatalf("table:\n%s\nwant:\n%s", table, want)
	}
	// No sweep, no grid.
	p = &page{dir: folder(t, dir), lab: &topologies.Lab{}, recs: recs}
	if figs, _ := gridFigures(p); figs != nil {
		t.Fatal("a lab without a sweep got a grid")
	}
	if table, _ := gridSection(p); table != "" {
		t.Fatal("a lab without a sweep got a grid")
	}
}
