//go:build integration

package test

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/atmlab/atmlab/harness/labrun"
)

// TestSawtoothReport runs atm-sweep.yaml (--quick, or whole with
// ATMLAB_FIGURES=DIR) and reads its report as a student would: no point
// reads above its ceiling without a flag that says so and why, the tables
// speak plain words, and each sawtooth figure is drawn. With
// ATMLAB_FIGURES=$PWD/../docs it takes the docs' sawtooth pictures:
// atm-small-sawtooth.png (AAL5) and atm-small-sawtooth-aal34.png.
func TestSawtoothReport(t *testing.T) {
	requireRoot(t, "iperf3")
	figures := os.Getenv("ATMLAB_FIGURES")
	out := t.TempDir()
	args := []string{"lab", "run", "../topologies/atm-sweep.yaml", "--out", out}
	if figures == "" {
		args = append(args, "--quick")
	}
	if b, err := exec.Command(atmlab, args...).CombinedOutput(); err != nil {
		t.Fatalf("lab run: %v\n%s", err, b)
	}
	f, err := os.Open(filepath.Join(out, "results.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	n, above := 0, 0
	for sc.Scan() {
		var rec labrun.Record
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatal(err)
		}
		n++
		share := rec.Result.ThroughputBps / rec.Ceiling
		t.Logf("%s %d: %.2f of %.2f Mbit/s (%.4f); late p99 %v; %s", rec.Experiment, rec.Size, rec.Result.ThroughputBps/1e6, rec.Ceiling/1e6, share, lateP99(rec), rec.Flag)
		if rec.AboveCeilingReason() != "" {
			above++
			if !strings.Contains(rec.Flag, "above it") && !strings.Contains(rec.Flag, "TAPs") && !strings.Contains(rec.Flag, "hypervisor") {
				t.Errorf("%s %d: %.4f of its ceiling, flag %q: a point above its ceiling without a reason", rec.Experiment, rec.Size, share, rec.Flag)
			}
		}
	}
	if n == 0 {
		t.Fatal("no results")
	}
	md, _ := os.ReadFile(filepath.Join(out, "report.md"))
	for _, want := range []string{"| message size (bytes) | runs |", "## Reading the tables", "h1 → h2 over OC-3c, AAL5, LLC/SNAP", "h1 → h2 over OC-3c, AAL3/4, LLC/SNAP"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	if c := strings.Count(string(md), "above it: no link carries more"); c < above {
		t.Errorf("%d points above their ceilings, %d notes in the report", above, c)
	}
	for src, dst := range map[string]string{"throughput-sawtooth.png": "atm-small-sawtooth.png", "throughput-sawtooth-aal34.png": "atm-small-sawtooth-aal34.png"} {
		png, err := os.ReadFile(filepath.Join(out, src))
		if err != nil || len(png) < 1000 {
			t.Fatalf("%s: %v", src, err)
		}
		if figures != "" {
			if err := os.WriteFile(filepath.Join(figures, dst), png, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func lateP99(rec labrun.Record) any {
	if rec.Lateness == nil {
		return "-"
	}
	return rec.Lateness.P99
}
