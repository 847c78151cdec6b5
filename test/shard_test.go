//go:build integration

package test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/atmlab/atmlab/harness/labrun"
)

// Two real-time shards of one campaign started together on one machine
// never measure over each other: the second says it waits for the first
// (the measuring lock) and measures after it; merged, they hold every point.
func TestShardsMeasureInTurn(t *testing.T) {
	requireRoot(t)
	name := labName()
	dir := t.TempDir()
	file := filepath.Join(dir, "lab.yaml")
	lab := pair100 + `experiments:
  - {name: rr, from: h1, to: h2, tests: [TCP_RR, UDP_RR], sizes: [1, 64], duration: 1s}
`
	if err := os.WriteFile(file, []byte(strings.ReplaceAll(lab, "NAME", name)), 0o644); err != nil {
		t.Fatal(err)
	}
	type shard struct {
		cmd    *exec.Cmd
		stderr bytes.Buffer
		out    string
		end    time.Time
	}
	var shards [2]*shard
	done := make(chan int, 2)
	for i := range shards {
		s := &shard{out: filepath.Join(dir, "shard-"+string(rune('1'+i)))}
		s.cmd = exec.Command(atmlab, "lab", "run", file, "--shard", string(rune('1'+i))+"/2", "--out", s.out)
		s.cmd.Stderr = &s.stderr
		if err := s.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		shards[i] = s
		go func() { s.cmd.Wait(); s.end = time.Now(); done <- i }()
	}
	first := <-done
	<-done
	waited := 0
	for i, s := range shards {
		if !s.cmd.ProcessState.Success() {
			t.Fatalf("shard %d/2: %v\n%s", i+1, s.cmd.ProcessState, s.stderr.String())
		}
		if strings.Contains(s.stderr.String(), "is measuring on this machine: waiting for it (/run/atmlab/measure.lock)") {
			waited++
			if i == first {
				t.Errorf("shard %d/2 waited but ended first", i+1)
			}
			// It measured after the other ended (records are stamped to the second).
			recs, err := labrun.ReadRecords(s.out)
			if err != nil {
				t.Fatalf("shard %d/2: %v", i+1, err)
			}
			if len(recs) == 0 { // the hash gives this shard no point: nothing to time (the merge below still counts all four)
				continue
			}
			at, _ := time.Parse(time.RFC3339, recs[0].At)
			if other := shards[1-i].end.Truncate(time.Second); at.Before(other) {
				t.Errorf("shard %d/2 measured from %v, before the other ended at %v", i+1, at, shards[1-i].end)
			}
		}
	}
	if waited != 1 {
		t.Fatalf("%d shards said they waited, want 1:\n%s\n----\n%s", waited, shards[0].stderr.String(), shards[1].stderr.String())
	}
	merged := filepath.Join(dir, "merged")
	b, err := exec.Command(atmlab, "report", shards[0].out, shards[1].out, "--out", merged).CombinedOutput()
	if err != nil || !strings.Contains(string(b), "merged 4 results from 2 folders") || strings.Contains(string(b), "warning") {
		t.Fatalf("merge: %v\n%s", err, b)
	}
	if left := namespaces(name); len(left) > 0 {
		t.Errorf("lab runs left namespaces: %v", left)
	}
}
