//go:build integration

package test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/atmlab/atmlab/internal/labtest"
)

// workersLab has two variants of four short points each.
var workersLab = labtest.Lab("two-hosts", "workers", `experiments:
  - {name: s, from: h1, to: h2, tests: [TCP_STREAM, UDP_STREAM], sizes: [512, 1460], duration: 100ms}
variants:
  - {name: slow, set: [{link: "h1:eth0", rate: 10M}]}
`)

// TestLabRunVirtualJobsOnWorkers: a virtual run two points at a time
// (on point workers, the variants overlapping) writes the same
// results.jsonl, timestamps aside, as one at a time, and leaves no worker
// running.
func TestLabRunVirtualJobsOnWorkers(t *testing.T) {
	base := t.TempDir()
	lab := filepath.Join(base, "workers.yaml")
	if err := os.WriteFile(lab, []byte(workersLab), 0o644); err != nil {
		t.Fatal(err)
	}
	at := regexp.MustCompile(`"at":"[^"]*"`)
	run := func(jobs string) string {
		out := filepath.Join(base, "jobs"+jobs)
		if b, err := exec.Command(atmlab, "lab", "run", lab, "--clock", "virtual", "--jobs", jobs, "--out", out).CombinedOutput(); err != nil {
			t.Fatalf("lab run --jobs %s: %v\n%s", jobs, err, b)
		}
		b, err := os.ReadFile(filepath.Join(out, "results.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		return at.ReplaceAllString(string(b), "")
	}
	one, two := run("1"), run("2")
	if n := strings.Count(one, "\n"); n != 8 {
		t.Fatalf("one at a time wrote %d records, want 8:\n%s", n, one)
	}
	if one != two {
		t.Errorf("two at a time wrote\n%s\none at a time\n%s", two, one)
	}
	if b, _ := exec.Command("pgrep", "-f", lab).Output(); len(b) != 0 {
		t.Errorf("processes left running with the lab file's name: %s", b)
	}
}
