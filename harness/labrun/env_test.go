package labrun

import (
	"context"

	"github.com/atmlab/atmlab/harness/clock"
	"github.com/atmlab/atmlab/harness/perf"
	"github.com/atmlab/atmlab/topologies/study"
)

// modelFunc is a virtual-time lab whose points a test's function
// measures, each on a lab of its own, as backend/virtual's.
type modelFunc func(ctx context.Context, p Point, e *study.Experiment) (perf.Result, *BackgroundLoad, error)

// env is the runner's Env for it.
func (f modelFunc) env() Env { return Env{Clock: clock.Virtual, Measure: f.measure} }

func (f modelFunc) measure(ctx context.Context, _ *Runner, p Point, e *study.Experiment, rec *Record) {
	runs := RunsOf(p, e)
	for p, ok := runs.Next(ctx); ok; p, ok = runs.Next(ctx) {
		res, load, err := f(ctx, p, e)
		rec.Background = load
		runs.Add(res, err)
	}
	var err error
	rec.Result, err = runs.Result(ctx)
	if err != nil {
		rec.Error = err.Error()
	}
}
