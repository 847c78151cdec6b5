package labrun

import (
	"context"
	"errors"
	"testing"

	"github.com/atmlab/atmlab/harness/perf"
	"github.com/atmlab/atmlab/topologies/study"
)

// drive runs a point's runs with figure(i) as run i's throughput, and
// says which iterations ran.
func drive(e *study.Experiment, figure func(i int) (float64, error)) (ran []int, res perf.Result, err error) {
	ctx := context.Background()
	runs := RunsOf(Point{Test: perf.TCPStream}, e)
	for p, ok := runs.Next(ctx); ok; p, ok = runs.Next(ctx) {
		ran = append(ran, p.Iteration)
		v, err := figure(p.Iteration)
		runs.Add(perf.Result{Test: perf.TCPStream, ThroughputBps: v}, err)
	}
	res, err = runs.Result(ctx)
	return ran, res, err
}

// TestRunsOfAPoint: a point runs once without a confidence:, and with
// one until it is reached (at least min, at most max runs), its figure
// the runs' mean; a failed run, or a confidence that cannot be, ends it.
func TestRunsOfAPoint(t *testing.T) {
	ran, res, err := drive(&study.Experiment{}, func(int) (float64, error) { return 7, nil })
	if len(ran) != 1 || res.ThroughputBps != 7 || res.Confidence != nil || err != nil {
		t.Errorf("without confidence: ran %v, %+v, %v", ran, res, err)
	}
	boom := errors.New("boom")
	if ran, _, err := drive(&study.Experiment{}, func(int) (float64, error) { return 0, boom }); len(ran) != 1 || err != boom {
		t.Errorf("a failed run without confidence: ran %v, %v", ran, err)
	}

	conf := &study.Experiment{Confidence: &study.Confidence{Level: 95, Width: 0.01, Min: 3, Max: 5}}
	ran, res, err = drive(conf, func(i int) (float64, error) { return 100, nil })
	if len(ran) != 3 || ran[2] != 2 || res.ThroughputBps != 100 || res.Confidence == nil || !res.Confidence.Met || err != nil {
		t.Errorf("steady figures: ran %v, %+v, %v", ran, res, err)
	}
	ran, res, err = drive(conf, func(i int) (float64, error) { return float64(100 + 50*(i%2)), nil })
	if len(ran) != 5 || res.ThroughputBps != 120 || res.Confidence.Met || err != nil {
		t.Errorf("scattered figures: ran %v, figure %v, %+v, %v", ran, res.ThroughputBps, res.Confidence, err)
	}
	ran, _, err = drive(conf, func(i int) (float64, error) {
		if i == 1 {
			return 0, boom
		}
		return 100, nil
	})
	if len(ran) != 2 || err != boom {
		t.Errorf("a failed second run: ran %v, %v", ran, err)
	}
	bad := &study.Experiment{Confidence: &study.Confidence{Level: 90, Width: 0.01}}
	if ran, _, err := drive(bad, func(int) (float64, error) { return 1, nil }); len(ran) != 0 || err == nil {
		t.Errorf("a 90 %% confidence: ran %v, %v", ran, err)
	}
}
