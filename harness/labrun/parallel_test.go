package labrun

import (
	"bytes"
	"context"
	"regexp"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/atmlab/atmlab/harness/clock"
	"github.com/atmlab/atmlab/harness/perf"
	"github.com/atmlab/atmlab/internal/labtest"
	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/labfile"
	"github.com/atmlab/atmlab/topologies/study"
)

// sideLab is a small lab with six points (one experiment, six sizes).
func sideLab(t *testing.T) *topologies.Lab {
	t.Helper()
	lab, err := labfile.Parse("side.yaml", []byte(labtest.Lab("two-hosts", "side", `experiments:
  - {name: s, from: h1, to: h2, tests: [UDP_STREAM], sizes: [64, 128, 256, 512, 1024, 1472], duration: 1s}
`)))
	if err != nil {
		t.Fatal(err)
	}
	return lab
}

// fakePerf is a virtual-time Perf whose figure is the point's size; a
// point of a size in hold waits until release is closed.
func fakePerf(hold map[int]bool, release chan struct{}, order *[]int, mu *sync.Mutex) func(context.Context, Point, *study.Experiment) (perf.Result, *BackgroundLoad, error) {
	return func(ctx context.Context, p Point, e *study.Experiment) (perf.Result, *BackgroundLoad, error) {
		if hold[p.Size] {
			select {
			case <-release:
			case <-ctx.Done():
				return perf.Result{Test: p.Test, Error: "interrupted"}, nil, ctx.Err()
			}
		}
		mu.Lock()
		*order = append(*order, p.Size)
		mu.Unlock()
		return perf.Result{Test: p.Test, ThroughputBps: float64(p.Size) * 1e4}, nil, nil
	}
}

var atField = regexp.MustCompile(`"at":"[^"]*"`)

// runJSONL runs the side lab's points jobs at a time and returns its
// results.jsonl without its timestamps and the order the points ended in.
func runJSONL(t *testing.T, jobs int, hold map[int]bool, release chan struct{}) (string, []int) {
	t.Helper()
	var out bytes.Buffer
	var order []int
	var mu sync.Mutex
	r := &Runner{Lab: sideLab(t), Variant: "base", JSONL: &out, Jobs: jobs, Env: modelFunc(fakePerf(hold, release, &order, &mu)).env()}
	recs, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 6 {
		t.Fatalf("%d records, want 6", len(recs))
	}
	return atField.ReplaceAllString(out.String(), `"at":""`), order
}

// TestVirtualPointsSideBySideWriteInOrder: points measured three at a time
// write the same results.jsonl, timestamps aside, as one at a time, even
// when later points end before earlier ones.
func TestVirtualPointsSideBySideWriteInOrder(t *testing.T) {
	one, _ := runJSONL(t, 1, nil, nil)
	release := make(chan struct{})
	// The first point waits until the other two of its three have ended.
	var once sync.Once
	hold := map[int]bool{64: true}
	go func() {
		time.Sleep(50 * time.Millisecond)
		once.Do(func() { close(release) })
	}()
	side, order := runJSONL(t, 3, hold, release)
	if side != one {
		t.Errorf("three at a time wrote\n%s\none at a time\n%s", side, one)
	}
	if len(order) == 0 || order[0] == 64 {
		t.Errorf("points ended in order %v: the first should have ended after later ones", order)
	}
}

// TestVirtualPointsSideBySideKeepInterruptedPrefix: an interrupted run
// keeps an unbroken first part of the points, in order, with nothing
// started after the interrupt.
func TestVirtualPointsSideBySideKeepInterruptedPrefix(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out bytes.Buffer
	var order []int
	var mu sync.Mutex
	release := make(chan struct{}) // never released: the first point ends only with ctx
	perfFn := fakePerf(map[int]bool{64: true}, release, &order, &mu)
	r := &Runner{Lab: sideLab(t), Variant: "base", JSONL: &out, Jobs: 2,
		Env: modelFunc(func(ctx context.Context, p Point, e *study.Experiment) (perf.Result, *BackgroundLoad, error) {
			res, load, err := perfFn(ctx, p, e)
			if p.Size == 128 {
				cancel() // interrupted while the second point ends
			}
			return res, load, err
		}).env()}
	recs, err := r.Run(ctx)
	if err != context.Canceled {
		t.Fatalf("Run = %v, want context.Canceled", err)
	}
	if len(recs) != 2 || recs[0].Size != 64 || recs[1].Size != 128 {
		t.Fatalf("kept %+v, want the first two points in order", recs)
	}
	if got := bytes.Count(out.Bytes(), []byte("\n")); got != 2 {
		t.Errorf("results.jsonl has %d lines, want 2", got)
	}
}

// TestVirtualPointsWithBackgroundStartFirst: side by side, the points of
// an experiment with a background load (the longest) start before the
// others, and the records are written in the points' order all the same.
func TestVirtualPointsWithBackgroundStartFirst(t *testing.T) {
	lab, err := labfile.Parse("bg.yaml", []byte(labtest.Lab("two-hosts", "bg", `experiments:
  - {name: plain, from: h1, to: h2, tests: [UDP_STREAM], sizes: [64, 128, 256], duration: 1s}
  - {name: loaded, from: h1, to: h2, tests: [UDP_STREAM], sizes: [512, 1024], duration: 1s, background: {from: h2, to: h1, test: UDP_STREAM}}
`)))
	if err != nil {
		t.Fatal(err)
	}
	run := func(jobs int) string {
		// A plain point ends only once a loaded one has: two plain points
		// on the two lanes first would wait for ever (here, 5 s).
		loadedEnded := make(chan struct{})
		var once sync.Once
		var out bytes.Buffer
		r := &Runner{Lab: lab, Variant: "base", JSONL: &out, Jobs: jobs, Env: modelFunc(func(ctx context.Context, p Point, e *study.Experiment) (perf.Result, *BackgroundLoad, error) {
			if p.Experiment == "loaded" {
				once.Do(func() { close(loadedEnded) })
			} else if jobs > 1 {
				select {
				case <-loadedEnded:
				case <-time.After(5 * time.Second):
					return perf.Result{Test: p.Test, Error: "no loaded point ended first"}, nil, nil
				}
			}
			return perf.Result{Test: p.Test, ThroughputBps: float64(p.Size) * 1e4}, nil, nil
		}).env()}
		if _, err := r.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		return atField.ReplaceAllString(out.String(), `"at":""`)
	}
	if one, two := run(1), run(2); two != one {
		t.Errorf("two at a time wrote\n%s\none at a time\n%s", two, one)
	}
}

// TestAnEnvOfOneLabMeasuresOneAtATime: an Env whose points share one lab
// and the machine (a real-time lab's) has them measured one at a time,
// in order, whatever the run's jobs; the same run's points on labs of
// their own run side by side.
func TestAnEnvOfOneLabMeasuresOneAtATime(t *testing.T) {
	for _, oneLab := range []bool{true, false} {
		var mu sync.Mutex
		var running, most int
		var order []int
		second := make(chan struct{}) // closed when a second point is under way beside the first
		var once sync.Once
		measure := func(ctx context.Context, _ *Runner, p Point, _ *study.Experiment, rec *Record) {
			mu.Lock()
			running++
			if most = max(most, running); running == 2 {
				once.Do(func() { close(second) })
			}
			mu.Unlock()
			// On labs of their own every point waits for a second one beside
			// it (the runner's lanes owe it one); on one lab the first waits
			// a moment, time a second lane would have to start, were there one.
			wait := 5 * time.Second
			if oneLab {
				wait = 50 * time.Millisecond
			}
			if !oneLab || p.Size == 64 {
				select {
				case <-second:
				case <-time.After(wait):
				}
			}
			mu.Lock()
			running--
			order = append(order, p.Size)
			mu.Unlock()
			rec.Result = perf.Result{Test: p.Test, ThroughputBps: 1e6}
		}
		r := &Runner{Lab: sideLab(t), Variant: "base", Jobs: 3, Env: Env{Clock: clock.Real, OneAtATime: oneLab, Measure: measure}}
		recs, err := r.Run(context.Background())
		if err != nil || len(recs) != 6 {
			t.Fatalf("one lab %v: %d records, %v", oneLab, len(recs), err)
		}
		if oneLab && (most != 1 || !slices.Equal(order, []int{64, 128, 256, 512, 1024, 1472})) {
			t.Errorf("one lab: %d points at once, measured in order %v; want 1, in the points' order", most, order)
		}
		if !oneLab && most < 2 {
			t.Errorf("labs of their own with 3 jobs: at most %d point at once, want them side by side", most)
		}
	}
}

// TestVirtualPointsStartLongestFirst: side by side, points start longest
// first (a loaded experiment's, then the most frames: small messages
// before large, a loopback last, ties in the points' order), and the
// records are written in the points' order all the same.
func TestVirtualPointsStartLongestFirst(t *testing.T) {
	lab, err := labfile.Parse("cost.yaml", []byte(labtest.Lab("two-hosts", "cost", `experiments:
  - {name: loop, from: h1, to: h1, tests: [TCP_STREAM], sizes: [64], duration: 1s}
  - {name: plain, from: h1, to: h2, tests: [UDP_STREAM], sizes: [1460, 64, 65507, 512], duration: 1s}
  - {name: long, from: h1, to: h2, tests: [UDP_STREAM], sizes: [1460], duration: 2s}
  - {name: loaded, from: h1, to: h2, tests: [UDP_STREAM], sizes: [1460], duration: 1s, background: {from: h2, to: h1, test: UDP_STREAM}}
`)))
	if err != nil {
		t.Fatal(err)
	}
	type key struct {
		exp  string
		size int
	}
	run := func(jobs int) (string, []key) {
		var out bytes.Buffer
		var started []key
		r := &Runner{Lab: lab, Variant: "base", JSONL: &out, Jobs: jobs,
			Watch: func(p Progress) {
				if p.Point != nil && p.Result == nil {
					started = append(started, key{p.Point.Experiment, p.Point.Size})
				}
			},
			Env: modelFunc(func(ctx context.Context, p Point, e *study.Experiment) (perf.Result, *BackgroundLoad, error) {
				return perf.Result{Test: p.Test, ThroughputBps: float64(p.Size) * 1e4}, nil, nil
			}).env()}
		if _, err := r.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		return atField.ReplaceAllString(out.String(), `"at":""`), started
	}
	one, _ := run(1)
	two, started := run(2)
	if two != one {
		t.Errorf("two at a time wrote\n%s\none at a time\n%s", two, one)
	}
	want := []key{{"loaded", 1460}, {"plain", 64}, {"plain", 512}, {"long", 1460}, {"plain", 1460}, {"plain", 65507}, {"loop", 64}}
	if !slices.Equal(started, want) {
		t.Errorf("two at a time started\n%v\nwant\n%v", started, want)
	}
}
