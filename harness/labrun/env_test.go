package labrun

import (
	"context"

	"github.com/atmlab/atmlab/harness/clock"
	"github.com/atmlab/atmlab/harness/perf"
	"github.com/atmlab/atmlab/topologies/study"
)

// realTime makes a test's stand-in lab a real-time one (Hosts).
type realTime struct{}

func (realTime) Clock() clock.Clock { return clock.Real }

// modelFunc is a virtual-time lab (Model) whose points a test's function
// measures.
type modelFunc func(ctx context.Context, p Point, e *study.Experiment) (perf.Result, *BackgroundLoad, error)

func (modelFunc) Clock() clock.Clock { return clock.Virtual }
func (modelFunc) Stack() string      { return "" }
func (f modelFunc) Measure(ctx context.Context, p Point, e *study.Experiment) (perf.Result, *BackgroundLoad, error) {
	return f(ctx, p, e)
}
