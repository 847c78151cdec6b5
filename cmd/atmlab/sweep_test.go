package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/atmlab/atmlab/harness/labrun"
	"github.com/atmlab/atmlab/internal/labtest"
)

var gridLab = labtest.Lab("two-hosts-switch", "glab", `experiments:
  - {name: tcp, from: h1, to: h2, tests: [TCP_STREAM], sizes: [1448], repetitions: 2, duration: 300ms}
  - {name: rr, from: h1, to: h2, tests: [TCP_RR], sizes: [1], duration: 200ms}
sweep:
  - {link: ["h1:eth0", "h2:eth0"], rate: [10M, 50M]}
  - {link: "h2:eth0", delay: [0s, 2ms]}
`)

var atRE = regexp.MustCompile(`"at":"[^"]*"`)

// readNoAt reads a results file without its wall-clock timestamps.
func readNoAt(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return atRE.ReplaceAllString(string(b), `"at":""`)
}

// A virtual-time sweep run whole and as 4 shards merged has the same
// points with the same figures, byte for byte apart from timestamps; the
// merge says what is missing and refuses a shard given twice.
func TestLabRunShardsMerge(t *testing.T) {
	tmp := t.TempDir()
	file := filepath.Join(tmp, "glab.yaml")
	os.WriteFile(file, []byte(gridLab), 0o644)
	whole := filepath.Join(tmp, "whole")
	if _, errOut, err := run(t, "lab", "run", file, "--clock", "virtual", "--out", whole); err != nil {
		t.Fatalf("lab run: %v\n%s", err, errOut)
	}
	var shards []string
	points := 0
	for k := 1; k <= 4; k++ {
		dir := filepath.Join(tmp, fmt.Sprintf("shard-%d", k))
		shards = append(shards, dir)
		if _, errOut, err := run(t, "lab", "run", file, "--clock", "virtual", "--shard", fmt.Sprintf("%d/4", k), "--out", dir); err != nil {
			t.Fatalf("lab run --shard %d/4: %v\n%s", k, err, errOut)
		}
		id, err := labrun.ReadIdentity(dir)
		if err != nil || id.Shard != fmt.Sprintf("%d/4", k) || id.Clock != "virtual" || id.Lab != "glab" || len(id.SHA256) != 64 || id.Version == "" {
			t.Fatalf("shard %d identity %+v, %v", k, id, err)
		}
		recs, _ := labrun.ReadRecords(dir)
		if len(recs) != id.Points {
			t.Errorf("shard %d measured %d points, planned %d", k, len(recs), id.Points)
		}
		for _, r := range recs {
			if !(labrun.Shard{K: k, N: 4}).Has(r.Point) {
				t.Errorf("shard %d measured %+v, not its point", k, r.Point)
			}
		}
		points += len(recs)
	}
	if points != 12 { // 4 grid points × (2 TCP_STREAM repetitions + 1 TCP_RR)
		t.Fatalf("4 shards measured %d points, want 12", points)
	}
	merged := filepath.Join(tmp, "merged")
	out, errOut, err := run(t, append(append([]string{"report"}, shards...), "--out", merged)...)
	if err != nil || !strings.Contains(out, "merged 12 results from 4 folders into "+merged) || errOut != "" {
		t.Fatalf("report --out: %v\n%s%s", err, out, errOut)
	}
	for _, f := range []string{"results.jsonl", "results.csv"} {
		if w, m := readNoAt(t, filepath.Join(whole, f)), readNoAt(t, filepath.Join(merged, f)); w != m {
			t.Errorf("%s differs between the whole run and the merged shards:\n%s\n----\n%s", f, w, m)
		}
	}
	if n := strings.Count(readNoAt(t, filepath.Join(whole, "results.jsonl")), "\n"); n != 12 {
		t.Fatalf("whole run: %d results", n)
	}
	// The reports agree too, their titles (the folders' names) apart.
	title := regexp.MustCompile(`(?m)^# atmlab report: .*$`)
	w, _ := os.ReadFile(filepath.Join(whole, "report.md"))
	m, _ := os.ReadFile(filepath.Join(merged, "report.md"))
	if title.ReplaceAllString(string(w), "") != title.ReplaceAllString(string(m), "") || !strings.Contains(string(m), "## The grid\n\n4 points of 4") {
		t.Errorf("reports differ:\n%s\n----\n%s", w, m)
	}
	var id labrun.Identity
	b, _ := os.ReadFile(filepath.Join(merged, "campaign.json"))
	if json.Unmarshal(b, &id) != nil || id.Points != 12 || len(id.Merged) != 4 || id.Missing != nil || id.Shard != "" {
		t.Errorf("merged campaign.json: %s", b)
	}

	// Three shards of four: a warning and the report's list, exit 0.
	part := filepath.Join(tmp, "part")
	_, errOut, err = run(t, "report", shards[0], shards[1], shards[3], "--out", part)
	id3, _ := labrun.ReadIdentity(shards[2])
	if err != nil || !strings.Contains(errOut, fmt.Sprintf("warning: %d points of the campaign are in none of the 3 folders", id3.Points)) {
		t.Fatalf("merge of 3 shards: %v %q", err, errOut)
	}
	if rep, _ := os.ReadFile(filepath.Join(part, "report.md")); !strings.Contains(string(rep), "## Missing points") {
		t.Error("the report does not list the missing points")
	}
	// A shard twice: refused, non-zero.
	if _, _, err := run(t, "report", shards[0], shards[0], "--out", filepath.Join(tmp, "dup")); err == nil || !strings.Contains(err.Error(), "are both shard 1/4") {
		t.Fatalf("merge of a shard twice: %v", err)
	}
	// Bad flags say how to fix them.
	if _, _, err := run(t, "lab", "run", file, "--clock", "virtual", "--shard", "0/4"); err == nil ||
		err.Error() != `--shard "0/4": want K/N with 1 <= K <= N, such as 1/4 (K counts from 1, as Slurm's array task ids)` {
		t.Fatalf("--shard 0/4: %v", err)
	}
	if _, _, err := run(t, "report", shards[0], shards[1]); err == nil || !strings.Contains(err.Error(), "merging needs --out DIR") {
		t.Fatalf("report of two folders without --out: %v", err)
	}
}
