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
	var err error
	rec.Result, err = Iterate(ctx, p, e, func(ctx context.Context, p Point, e *study.Experiment) (perf.Result, error) {
		res, load, err := f(ctx, p, e)
		rec.Background = load
		return res, err
	})
	if err != nil {
		rec.Error = err.Error()
	}
}
