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
)

var mergeLab = labtest.Set(labtest.Lab("two-hosts", "m", `experiments:
  - {name: e, from: h1, to: h2, tests: [TCP_STREAM], sizes: [512, 1472]}
sweep:
  - {link: "h1:eth0", delay: [0s, 5ms]}
`), "topology.links[0].ethernet.rate", "10M")

// shardDir writes a results folder of the lab with the given points
// measured (a figure each) and identity.
func shardDir(t *testing.T, root, name string, id labrun.Identity, pts ...labrun.Point) string {
	t.Helper()
	dir := filepath.Join(root, name)
	var b strings.Builder
	for _, p := range pts {
		r := labrun.Record{Point: p, Clock: "virtual", At: "now"}
		r.Result.ThroughputBps = float64(p.Size) * 1e4
		j, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(append(j, '\n'))
	}
	for _, err := range []error{
		os.MkdirAll(dir, 0o755),
		os.WriteFile(filepath.Join(dir, "lab.yaml"), []byte(mergeLab), 0o644),
		labrun.WriteIdentity(folder(t, dir), id),
		os.WriteFile(filepath.Join(dir, "results.jsonl"), []byte(b.String()), 0o644),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func pt(variant string, size int) labrun.Point {
	return labrun.Point{Variant: variant, Experiment: "e", Tool: "atmlab", Test: perf.TCPStream, Size: size, Rep: 1, From: "h1", To: "h2"}
}

// A merge's report lists the campaign's points no shard measured
// (labrun's TestMerge checks the merged folder itself).
func TestMergedReportMissing(t *testing.T) {
	root := t.TempDir()
	id := labrun.Identity{Lab: "m", SHA256: "aa", Version: "v1", Clock: "virtual", Shard: "1/2"}
	a := shardDir(t, root, "a", id, pt("delay=5ms", 1472), pt("delay=0s", 512))
	id.Shard = "2/2"
	b := shardDir(t, root, "b", id, pt("delay=0s", 1472))
	out := filepath.Join(root, "out")
	if _, err := labrun.Merge(t.Context(), out, []string{a, b}); err != nil {
		t.Fatal(err)
	}
	if err := Write(t.Context(), out); err != nil {
		t.Fatal(err)
	}
	report, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(report), "## Missing points\n\n1 of the campaign's 4 points are in none of the folders merged") ||
		!strings.Contains(string(report), "- delay=5ms · e · TCP_STREAM · size 512 · sockbuf 0 · #1 (virtual time)") {
		t.Fatalf("report lacks the missing point:\n%s", report)
	}
}

// A results folder whose reference figures or campaign identity do not
// read is an error, not a report without its comparison or missing list.
func TestReportBrokenInputs(t *testing.T) {
	for _, file := range []string{"references.json", labrun.IdentityFile} {
		t.Run(file, func(t *testing.T) {
			id := labrun.Identity{Lab: "m", SHA256: "aa", Version: "v1", Clock: "virtual"}
			dir := shardDir(t, t.TempDir(), "r", id, pt("delay=0s", 512))
			if err := Write(t.Context(), dir); err != nil {
				t.Fatalf("the folder as written: %v", err)
			}
			if err := os.WriteFile(filepath.Join(dir, file), []byte("{not json"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := Write(t.Context(), dir); err == nil || !strings.Contains(err.Error(), filepath.Join(dir, file)) {
				t.Fatalf("Write() with a broken %s = %v", file, err)
			}
		})
	}
}
