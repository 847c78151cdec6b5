package measure

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/atmlab/atmlab/harness/clock"
	"github.com/atmlab/atmlab/harness/labrun"
	"github.com/atmlab/atmlab/internal/labtest"
)

// writeLab writes a lab file into dir and returns its path.
func writeLab(t *testing.T, dir, src string) string {
	t.Helper()
	path := filepath.Join(dir, "lab.yaml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// A lab run past its flags, in virtual time: the lab loaded and planned,
// each point measured into the results folder by the clock's backend,
// the run's end said in its log, then the report rendered on the folder
// and its path and the flent files said on stdout.
func TestLabRunMeasuresIntoItsFolderThenReports(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	file := writeLab(t, dir, labtest.Lab("two-hosts", "m", `experiments:
  - {name: rr, from: h1, to: h2, tests: [UDP_RR], sizes: [64, 512], duration: 200ms}
`))
	var stdout, log strings.Builder
	var reported []string
	l := &Lab{Start: labrun.Start{File: file, Clocks: clock.Choice{clock.Virtual}, Out: out, Jobs: 1, Log: &log}, Stdout: &stdout,
		Report: func(_ context.Context, d string) error { reported = append(reported, d); return nil }}
	if err := l.Load(); err != nil {
		t.Fatal(err)
	}
	if err := l.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if want := "base (virtual time): 2 points; results in " + out + "\nlab m removed; 2 results\n"; log.String() != want {
		t.Errorf("log %q, want %q", log.String(), want)
	}
	if want := "report: " + filepath.Join(out, "report.html") + "\nflent: 2 files in " + filepath.Join(out, "flent") + "\n"; stdout.String() != want {
		t.Errorf("stdout %q, want %q", stdout.String(), want)
	}
	if len(reported) != 1 || reported[0] != out {
		t.Errorf("reported %q, want the results folder once", reported)
	}
	b, err := os.ReadFile(filepath.Join(out, "results.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var sizes []int
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var rec labrun.Record
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		if rec.Clock != "virtual" || rec.Test != "UDP_RR" || rec.Result.TransactionsPerSec <= 0 || rec.Error != "" {
			t.Errorf("record %s", line)
		}
		sizes = append(sizes, rec.Size)
	}
	if len(sizes) != 2 || sizes[0] != 64 || sizes[1] != 512 {
		t.Errorf("records of sizes %v, want 64 then 512", sizes)
	}
}

// A lab file with no experiments has nothing to run: Load says so,
// naming the file and where to read how to add them.
func TestLabRunRefusesALabWithNoExperiments(t *testing.T) {
	file := writeLab(t, t.TempDir(), labtest.Lab("two-hosts", "bare"))
	var log strings.Builder
	l := &Lab{Start: labrun.Start{File: file, Clocks: clock.Choice{clock.Virtual}, Log: &log}}
	err := l.Load()
	if want := file + " has no experiments: add an experiments: section (see docs/experiments.md)"; err == nil || err.Error() != want {
		t.Errorf("Load() = %v, want %q", err, want)
	}
}

// An interrupted run still renders the report of what it measured and
// says where that is.
func TestLabRunReportsAfterAnInterrupt(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	file := writeLab(t, dir, labtest.Lab("two-hosts", "m", `experiments:
  - {name: rr, from: h1, to: h2, tests: [UDP_RR], sizes: [64], duration: 200ms}
`))
	var stdout, log strings.Builder
	reported := 0
	l := &Lab{Start: labrun.Start{File: file, Clocks: clock.Choice{clock.Virtual}, Out: out, Jobs: 1, Log: &log}, Stdout: &stdout,
		Report: func(context.Context, string) error { reported++; return nil }}
	if err := l.Load(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := l.Run(ctx)
	if want := "interrupted after 0 points; what was measured is in " + out; err == nil || err.Error() != want {
		t.Errorf("Run() = %v, want %q", err, want)
	}
	if reported != 1 || !strings.HasPrefix(stdout.String(), "report: "+filepath.Join(out, "report.html")+"\n") {
		t.Errorf("report rendered %d times, stdout %q; want once, and its path said", reported, stdout.String())
	}
}
