package labrun

import (
	"context"
	"testing"

	"github.com/atmlab/atmlab/harness/perf"
	"github.com/atmlab/atmlab/internal/labtest"
	"github.com/atmlab/atmlab/topologies/labfile"
	"github.com/atmlab/atmlab/topologies/study"
)

// TestRunnerWatch: the watcher sees each point before it is measured and
// again with its result, then the end.
func TestRunnerWatch(t *testing.T) {
	lab, err := labfile.Parse("watch.yaml", []byte(labtest.Lab("two-hosts", "watch", `experiments:
  - {name: s, from: h1, to: h2, tests: [UDP_STREAM], sizes: [64, 1472], duration: 1s}
`)))
	if err != nil {
		t.Fatal(err)
	}
	var seen []Progress
	r := &Runner{Lab: lab, Variant: "base", Watch: func(p Progress) { seen = append(seen, p) },
		Env: modelFunc(func(ctx context.Context, p Point, e *study.Experiment) (perf.Result, *BackgroundLoad, error) {
			return perf.Result{Test: p.Test, ThroughputBps: float64(p.Size) * 1e4}, nil, nil
		}).env()}
	if _, err := r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 5 {
		t.Fatalf("watcher called %d times, want 5 (start and result of 2 points, end): %+v", len(seen), seen)
	}
	for i, want := range []struct {
		done   int
		size   int // 0: no point
		result bool
	}{{0, 64, false}, {1, 64, true}, {1, 1472, false}, {2, 1472, true}, {2, 0, false}} {
		p := seen[i]
		if p.Done != want.done || p.Total != 2 || (p.Point == nil) != (want.size == 0) || (p.Result != nil) != want.result {
			t.Fatalf("call %d = %+v, want done %d size %d result %v", i, p, want.done, want.size, want.result)
		}
		if p.Point != nil && p.Point.Size != want.size {
			t.Errorf("call %d measures size %d, want %d", i, p.Point.Size, want.size)
		}
		if want.done == 0 && p.ETA != -1 {
			t.Errorf("call %d ETA %v before any point ended, want -1", i, p.ETA)
		}
	}
	if r := seen[3].Result; r.Result.ThroughputBps != 14.72e6 || r.Ceiling <= r.Result.ThroughputBps {
		t.Errorf("last result %+v: want 14.72 Mbit/s under its ceiling", r)
	}
}
