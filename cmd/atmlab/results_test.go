package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/atmlab/atmlab/harness/labrun"
)

// rrLab is virtualLab with two short points.
func rrLab(t *testing.T, dir, duration string) string {
	t.Helper()
	file := filepath.Join(dir, "rr.yaml")
	lab := virtualLab[:strings.Index(virtualLab, "experiments:")] + "experiments:\n  - {name: rr, from: h1, to: h2, tests: [TCP_RR], sizes: [1, 64], duration: " + duration + "}\n"
	if err := os.WriteFile(file, []byte(lab), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

func records(t *testing.T, dir string) []labrun.Record {
	t.Helper()
	recs, err := labrun.ReadRecords(dir)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// lab run --out into a folder that holds anything is refused; --append
// measures only the points the folder lacks; --force replaces an earlier
// run's files.
func TestLabRunOutRefusesAppendsOrReplaces(t *testing.T) {
	dir := t.TempDir()
	file := rrLab(t, dir, "100ms")
	out := filepath.Join(dir, "out")
	os.Mkdir(out, 0o755)
	os.WriteFile(filepath.Join(out, "notes.txt"), []byte("mine"), 0o644)
	_, _, err := run(t, "lab", "run", "--clock", "virtual", "--out", out, file)
	if err == nil || !strings.Contains(err.Error(), out+" holds notes.txt: results folder is not empty: --append adds") || !strings.Contains(err.Error(), "--force replaces them") {
		t.Fatalf("lab run into a folder with a file: %v", err)
	}
	if names, _ := os.ReadDir(out); len(names) != 1 {
		t.Fatalf("a refused lab run wrote into %s: %v", out, names)
	}
	os.Remove(filepath.Join(out, "notes.txt"))
	if _, errOut, err := run(t, "lab", "run", "--clock", "virtual", "--out", out, file); err != nil {
		t.Fatalf("lab run into an empty folder: %v\n%s", err, errOut)
	}
	whole := records(t, out)
	if len(whole) != 2 {
		t.Fatalf("%d records, want 2", len(whole))
	}
	if _, _, err := run(t, "lab", "run", "--clock", "virtual", "--out", out, file); err == nil || !strings.Contains(err.Error(), "results folder is not empty") {
		t.Fatalf("a second lab run into the folder: %v", err)
	}
	// An interrupted run (its last point lost) resumed: only that point
	// is measured; what was there is kept byte for byte.
	jsonl, _ := os.ReadFile(filepath.Join(out, labrun.RecordsFile))
	first := jsonl[:strings.Index(string(jsonl), "\n")+1]
	os.WriteFile(filepath.Join(out, labrun.RecordsFile), first, 0o644)
	if _, errOut, err := run(t, "lab", "run", "--clock", "virtual", "--append", "--out", out, file); err != nil || !strings.Contains(errOut, "1 results") {
		t.Fatalf("lab run --append: %v\n%s", err, errOut)
	}
	recs := records(t, out)
	if b, _ := os.ReadFile(filepath.Join(out, labrun.RecordsFile)); len(recs) != 2 || !strings.HasPrefix(string(b), string(first)) || recs[1].Size != whole[1].Size {
		t.Fatalf("after --append: %d records\n%s", len(recs), b)
	}
	if csv, _ := os.ReadFile(filepath.Join(out, labrun.CSVFile)); strings.Count(string(csv), "variant,") != 1 {
		t.Fatalf("results.csv after --append has %d headers", strings.Count(string(csv), "variant,"))
	}
	// Another lab file is another campaign: not appended.
	other := rrLab(t, t.TempDir(), "150ms")
	if _, _, err := run(t, "lab", "run", "--clock", "virtual", "--append", "--out", out, other); err == nil || !strings.Contains(err.Error(), "its results are of another lab file") {
		t.Fatalf("lab run --append of another lab file: %v", err)
	}
	// --force: nothing of the earlier run passes for this one's.
	os.WriteFile(filepath.Join(out, labrun.QuickMarker), nil, 0o644)
	if _, errOut, err := run(t, "lab", "run", "--clock", "virtual", "--force", "--out", out, other); err != nil {
		t.Fatalf("lab run --force: %v\n%s", err, errOut)
	}
	if _, err := os.Stat(filepath.Join(out, labrun.QuickMarker)); err == nil || len(records(t, out)) != 2 {
		t.Fatal("lab run --force kept the earlier run's quick marker or records")
	}
	if _, _, err := run(t, "lab", "run", "--clock", "virtual", "--append", "--force", "--out", out, file); err == nil || !strings.Contains(err.Error(), "give one") {
		t.Fatalf("--append --force: %v", err)
	}
}

func TestLabRunRefusesALinkedOut(t *testing.T) {
	dir := t.TempDir()
	file := rrLab(t, dir, "100ms")
	real := filepath.Join(dir, "real")
	os.Mkdir(real, 0o755)
	link := filepath.Join(dir, "link")
	os.Symlink(real, link)
	if _, _, err := run(t, "lab", "run", "--clock", "virtual", "--out", link, file); err == nil || !strings.Contains(err.Error(), link+" is a symbolic link") {
		t.Fatalf("lab run --out a link: %v", err)
	}
	if names, _ := os.ReadDir(real); len(names) != 0 {
		t.Fatalf("lab run wrote through the link: %v", names)
	}
}

// report stops when its context ends (SIGINT or SIGTERM in main).
func TestReportStopsWhenInterrupted(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, labrun.RecordsFile), nil, 0o644)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	root := newRoot()
	root.SetArgs([]string{"report", dir})
	if err := root.ExecuteContext(ctx); !errors.Is(err, errInterrupted) {
		t.Fatalf("report with its context ended = %v, want %v", err, errInterrupted)
	}
	root = newRoot()
	root.SetArgs([]string{"report", dir, dir + "x", "--out", filepath.Join(dir, "m")})
	if err := root.ExecuteContext(ctx); !errors.Is(err, errInterrupted) {
		t.Fatalf("report --out with its context ended = %v, want %v", err, errInterrupted)
	}
}
