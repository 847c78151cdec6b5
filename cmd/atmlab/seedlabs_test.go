package main

import (
	"bytes"
	"context"
	"encoding/json"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/atmlab/atmlab/harness/labrun"
	"github.com/atmlab/atmlab/topologies/labfile"
)

// seedLabs are the lab files the seed labs' studies rest on (docs/seed-labs.md).
var seedLabs = []string{"praktikum", "sandia-wan", "cernet-atm", "gns3-mpls"}

// seedPointDuration is how long each point of the seed labs' quick runs
// lasts in TestSeedLabsDeterminism: a quick run's whole matrix, each point
// cut from its 1-3 s to this, so the test takes seconds of CI time;
// scripts/determinism.sh (make bench) compares whole quick runs.
const seedPointDuration = 200 * time.Millisecond

// virtualFigures runs every variant of a lab's quick run in virtual time,
// each point cut to seedPointDuration, as lab run does, and returns its
// results.jsonl lines without their wall-clock timestamps.
func virtualFigures(t *testing.T, file string) []string {
	t.Helper()
	lab, err := labfile.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	var jsonl bytes.Buffer
	names := []string{"base"}
	for _, v := range lab.Variants {
		names = append(names, v.Name)
	}
	for _, name := range names {
		vlab, err := lab.WithVariant(name)
		if err != nil {
			t.Fatal(err)
		}
		labrun.Quicken(vlab, name)
		for _, e := range vlab.Experiments {
			e.Duration = min(e.Duration, seedPointDuration)
		}
		if len(vlab.Experiments) == 0 {
			continue
		}
		r := &labrun.Runner{Variant: name, Lab: vlab, JSONL: &jsonl}
		if _, err := runVirtual(context.Background(), vlab, r, t.TempDir()); err != nil {
			t.Fatalf("%s, variant %s: %v", file, name, err)
		}
	}
	var out []string
	for _, line := range strings.Split(strings.TrimSpace(jsonl.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatal(err)
		}
		delete(m, "at")
		b, _ := json.Marshal(m)
		out = append(out, string(b))
	}
	return out
}

// skipInStubRun skips a test that drives the runner's library code
// directly rather than through a verb, in make unit's stub run (stubRun):
// the stub build differs only in what the verbs reach (the kernel
// runtime), so the Linux build's run of the same test has checked it.
func skipInStubRun(t *testing.T) {
	t.Helper()
	if stubRun {
		t.Skip("the same library code as the Linux build's run of this test; the stub run checks the verbs")
	}
}

// TestSeedLabsDeterminism runs the four seed labs' quick runs in virtual
// time (shortened points) twice as the machine is and under GOMAXPROCS 1
// and 2 (on two cores: twice at 2, once at 1): every record of
// results.jsonl the same each time, timestamps aside, in one process
// (whatever one run leaves behind must not change the next).
func TestSeedLabsDeterminism(t *testing.T) {
	skipInStubRun(t)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, name := range seedLabs {
		t.Run(name, func(t *testing.T) {
			file := "../../topologies/" + name + ".yaml"
			first := virtualFigures(t, file)
			measured := 0
			for _, line := range first {
				if strings.Contains(line, `"throughput_bps"`) || strings.Contains(line, `"transactions_per_sec"`) {
					measured++
				}
			}
			if measured == 0 {
				t.Fatalf("no point measured a figure:\n%s", strings.Join(first, "\n"))
			}
			procs := []int{runtime.GOMAXPROCS(0), 1, 2} // twice as the machine is, then 1 and 2
			if procs[0] <= 2 {
				procs = []int{procs[0], 3 - procs[0]} // the first run was one of them (2 on CI)
			}
			for _, n := range procs {
				runtime.GOMAXPROCS(n)
				again := virtualFigures(t, file)
				if len(again) != len(first) {
					t.Fatalf("GOMAXPROCS=%d: %d records, the first run %d", n, len(again), len(first))
				}
				for i := range first {
					if again[i] != first[i] {
						t.Errorf("GOMAXPROCS=%d: record %d differs:\n%s\n%s", n, i+1, first[i], again[i])
					}
				}
			}
		})
	}
}
