package labrun

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/atmlab/atmlab/harness/clock"
	"github.com/atmlab/atmlab/harness/results"
)

// A lab run's folder says its format, holds the lab and spec it was
// measured from, and its CSV has one header however often it is
// appended to.
func TestOutputWritesInputsAndOneCSVHeader(t *testing.T) {
	lab := streamLab(t)
	out := filepath.Join(t.TempDir(), "run")
	id := NewIdentity(lab, []byte("src"), "virtual", false, Shard{})
	for i, appendRun := range []bool{false, true} {
		o, err := OpenOutput(context.Background(), out, appendRun, false, id)
		if err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		if err := o.WriteInputs("m.yaml", []byte("src"), lab, []Variant{{Name: "base", Lab: lab}}, false); err != nil {
			t.Fatal(err)
		}
		if err := o.Records(); err != nil {
			t.Fatal(err)
		}
		o.CSV.Flush()
		if err := WriteIdentity(o.Dir, id); err != nil {
			t.Fatal(err)
		}
		if err := o.Close(); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{results.FormatFile, LabFile, "spec.json", IdentityFile, RecordsFile} {
		if _, err := os.Stat(filepath.Join(out, name)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	b, _ := os.ReadFile(filepath.Join(out, CSVFile))
	if n := strings.Count(string(b), strings.Join(CSVHeader, ",")); n != 1 {
		t.Fatalf("results.csv has %d headers, want 1:\n%s", n, b)
	}
}

// A folder that holds files is refused unless the run appends to it or
// replaces it, and --force removes an earlier run's records.
func TestOutputRefusesAFullFolderAndForceClearsIt(t *testing.T) {
	out := t.TempDir()
	os.WriteFile(filepath.Join(out, RecordsFile), []byte("old\n"), 0o644)
	id := NewIdentity(streamLab(t), []byte("src"), "virtual", false, Shard{})
	if _, err := OpenOutput(context.Background(), out, false, false, id); err == nil || !strings.Contains(err.Error(), "--append adds this run's points") {
		t.Fatalf("a full folder: %v", err)
	}
	if _, err := OpenOutput(context.Background(), out, true, true, id); err != ErrAppendAndForce {
		t.Fatalf("--append and --force: %v", err)
	}
	o, err := OpenOutput(context.Background(), out, false, true, id)
	if err != nil {
		t.Fatal(err)
	}
	o.Close()
	if _, err := os.Stat(filepath.Join(out, RecordsFile)); !os.IsNotExist(err) {
		t.Fatalf("--force left the earlier records: %v", err)
	}
}

// A lab run's Begin opens its folder, writes its inputs and campaign.json
// with the campaign's points, and hands back a campaign writing into it.
func TestStartBeginWritesTheFolderAndIdentity(t *testing.T) {
	lab := streamLab(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "m.yaml")
	os.WriteFile(file, []byte("src"), 0o644)
	s := Start{File: file, Lab: lab, Variants: []Variant{{Name: "base", Lab: lab}}, Clocks: clock.Choice{clock.Virtual}, Out: filepath.Join(dir, "out")}
	o, camp, err := s.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if camp.Out != s.Out || camp.JSONL == nil || camp.CSV == nil || camp.Self == "" {
		t.Fatalf("campaign %+v", camp)
	}
	id, err := IdentityOf(o.Dir)
	if err != nil || id.Points != camp.Points() || id.Points == 0 {
		t.Fatalf("campaign.json: %+v, %v; want %d points", id, err, camp.Points())
	}
}
