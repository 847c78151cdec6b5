package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/atmlab/atmlab/harness/labrun"
	"github.com/atmlab/atmlab/harness/perf"
	"github.com/atmlab/atmlab/harness/theory"
	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/labfile"
)

// quickFolder writes what lab run --quick leaves of a seed lab, with a
// fixture record for every point (no traffic), into root/name/res; spec
// says whether spec.json is among it, as it is since lab run wrote one.
func quickFolder(t *testing.T, file, root string, spec bool) string {
	t.Helper()
	dir := filepath.Join(root, "res")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	lab, err := labfile.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	variants, err := labrun.Plan(lab, true)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	var labs []*topologies.Lab
	var lines []string
	for _, v := range variants {
		names, labs = append(names, v.Name), append(labs, v.Lab)
		for i, p := range labrun.ShardPoints(v.Lab, v.Name, labrun.Shard{}) {
			r := labrun.Record{Point: p, Result: perf.Result{Test: p.Test}}
			if isRR(p.Test) {
				r.Result.TransactionsPerSec = float64(1000 + 37*i)
			} else {
				c, _ := theory.PathCeiling(v.Lab, p.From, p.To, p.Test, p.Size)
				r.Ceiling = c
				r.Result.ThroughputBps = c * (0.9 + float64(i%7)/100)
			}
			b, _ := json.Marshal(r)
			lines = append(lines, string(b))
		}
	}
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{"lab.yaml": src, "results.jsonl": []byte(strings.Join(lines, "\n") + "\n"), labrun.QuickMarker: nil}
	if spec {
		if files[topologies.SpecFile], err = topologies.SpecJSON(names, labs); err != nil {
			t.Fatal(err)
		}
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := labrun.WriteFigures(folder(t, dir), labrun.ResolveReferences(lab)); err != nil {
		t.Fatal(err)
	}
	return dir
}

// The report reads spec.json, the labs the runs were built from: a seed
// lab's quick results render the same report from it as from lab.yaml
// resolved again (report.md and every plot), and from spec.json alone; a
// folder written before spec.json existed renders from its lab.yaml and
// says so; a spec.json that does not read is an error, not a shorter
// report.
func TestReportReadsSpec(t *testing.T) {
	files, err := filepath.Glob("../../topologies/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatal(files, err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".yaml")
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			withSpec := quickFolder(t, file, filepath.Join(root, "new"), true)
			old := quickFolder(t, file, filepath.Join(root, "old"), false)
			for _, dir := range []string{withSpec, old} {
				if err := Write(t.Context(), dir); err != nil {
					t.Fatal(err)
				}
			}
			newMD, _ := os.ReadFile(filepath.Join(withSpec, "report.md"))
			oldMD, _ := os.ReadFile(filepath.Join(old, "report.md"))
			if strings.Contains(string(newMD), oldFolderNote) || !strings.Contains(string(oldMD), oldFolderNote) {
				t.Fatalf("the note on a folder without spec.json: in the new report %v, in the old %v", strings.Contains(string(newMD), oldFolderNote), strings.Contains(string(oldMD), oldFolderNote))
			}
			if strings.Replace(string(oldMD), oldFolderNote, "", 1) != string(newMD) {
				t.Errorf("report.md from spec.json differs from lab.yaml's:\n%s\n---- lab.yaml's:\n%s", newMD, oldMD)
			}
			plots, _ := filepath.Glob(filepath.Join(withSpec, "*.svg"))
			if len(plots) == 0 {
				t.Fatal("no plots")
			}
			for _, p := range plots {
				a, _ := os.ReadFile(p)
				b, err := os.ReadFile(filepath.Join(old, filepath.Base(p)))
				if err != nil || string(a) != string(b) {
					t.Errorf("%s differs from lab.yaml's (%v)", filepath.Base(p), err)
				}
			}
			// spec.json alone: the lab.yaml (and any reference file it
			// names) is not needed.
			os.Remove(filepath.Join(withSpec, "lab.yaml"))
			if err := Write(t.Context(), withSpec); err != nil {
				t.Fatal(err)
			}
			if md, _ := os.ReadFile(filepath.Join(withSpec, "report.md")); string(md) != string(newMD) {
				t.Errorf("report.md from spec.json alone differs:\n%s", md)
			}
		})
	}
	dir := quickFolder(t, "../../topologies/sw100.yaml", t.TempDir(), true)
	for _, bad := range []string{"{", `{"variants": []}`} {
		os.WriteFile(filepath.Join(dir, topologies.SpecFile), []byte(bad), 0o644)
		if err := Write(t.Context(), dir); err == nil || !strings.Contains(err.Error(), "spec.json does not read") {
			t.Errorf("report of spec.json %q: %v", bad, err)
		}
	}
}
