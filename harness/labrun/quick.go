package labrun

import (
	"cmp"
	"slices"
	"time"

	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/study"
)

// Quicken shrinks the experiments of one variant of a lab: what an
// experiment's quick: says, else the first, middle and last size, the last
// socket buffer, one repetition, at most 2 s per point (lab run --quick).
func Quicken(lab *topologies.Lab, variant string) {
	lab.Experiments = slices.DeleteFunc(lab.Experiments, func(e *study.Experiment) bool {
		return e.Quick != nil && len(e.Quick.Variants) > 0 && !slices.Contains(e.Quick.Variants, variant)
	})
	for _, e := range lab.Experiments {
		q := cmp.Or(e.Quick, &study.Quick{})
		switch n := len(e.Sizes); {
		case q.Sizes != nil:
			e.Sizes = q.Sizes
		case n > 3:
			e.Sizes = []int{e.Sizes[0], e.Sizes[n/2], e.Sizes[n-1]}
		}
		switch n := len(e.SockBufs); {
		case q.SockBufs != nil:
			e.SockBufs = q.SockBufs
		case n > 1:
			e.SockBufs = e.SockBufs[n-1:]
		}
		if q.Tests != nil {
			e.Tests = q.Tests
		}
		e.Repetitions = cmp.Or(q.Repetitions, 1)
		e.Duration = cmp.Or(q.Duration, min(e.Duration, 2*time.Second))
	}
}
