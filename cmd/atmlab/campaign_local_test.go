package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestCampaignLocal runs a virtual-time quick campaign on this machine in
// 4 shards (children of the test binary, in parallel) and the same lab
// whole: the merged results hold the same points with the same figures.
func TestCampaignLocal(t *testing.T) {
	t.Setenv("ATMLAB_TEST_MAIN", "1") // the shards are this binary run as atmlab
	file := filepath.Join(t.TempDir(), "vlab.yaml")
	os.WriteFile(file, []byte(virtualLab), 0o644)
	out := filepath.Join(t.TempDir(), "campaign")
	_, errOut, err := run(t, "campaign", file, "--engine", "local", "--shards", "4", "--clock", "virtual", "--quick", "--out", out)
	if err != nil {
		t.Fatalf("campaign --engine local: %v\n%s", err, errOut)
	}
	for _, f := range []string{"shard-1", "shard-2", "shard-3", "shard-4", "shard-1.log", "merge.log", "report.html", "report.md", "results.jsonl"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("no %s after the campaign: %v", f, err)
		}
	}
	if !strings.Contains(errOut, "merged 4 shard folders: "+filepath.Join(out, "report.html")) {
		t.Errorf("campaign did not say it merged: %q", errOut)
	}
	whole := filepath.Join(t.TempDir(), "whole")
	if _, errOut, err := run(t, "lab", "run", file, "--clock", "virtual", "--quick", "--out", whole); err != nil {
		t.Fatalf("lab run: %v\n%s", err, errOut)
	}
	got, want := pointFigures(t, out), pointFigures(t, whole)
	if len(want) != 5 || !slices.Equal(got, want) { // streams: 3 tests of one size, once (--quick); tools: iperf3, skipped in virtual time; as-atmlab: iperf3 run as atmlab
		t.Errorf("4 shards merged:\n%s\nthe campaign whole:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// pointFigures returns each record's point and result, sorted: what must
// not depend on how a campaign was cut.
func pointFigures(t *testing.T, dir string) []string {
	t.Helper()
	var s []string
	for _, r := range figures(t, dir) {
		point := map[string]any{"result": r["result"]}
		for _, k := range []string{"variant", "experiment", "test", "size", "sockbuf", "repetition", "clock"} {
			point[k] = r[k]
		}
		b, _ := json.Marshal(point)
		s = append(s, string(b))
	}
	slices.Sort(s)
	return s
}
