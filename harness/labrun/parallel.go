package labrun

import (
	"context"
	"fmt"
	"time"

	"github.com/atmlab/atmlab/topologies"
)

// runSideBySide measures a run's points up to lanes at a time, each on a
// lab of its own (an Env whose Lanes allow it; seeded by the point alone,
// so its figures do not depend on what runs beside it), and writes their records in the
// points' order, as one at a time would: a point that ends before an
// earlier one waits for it. The points start in order; when ctx ends no
// further point starts, and those under way end and are written, so an
// interrupted run keeps an unbroken first part of the points, as one at a
// time keeps.
func (r *Runner) runSideBySide(ctx context.Context, pts []Point, start time.Time, lanes int) ([]Record, error) {
	// The lab's name and endpoint indexes fill in as they are first read:
	// filled now, the points beside each other only read them.
	r.Lab.Node("")
	r.Lab.LinkOf(topologies.Endpoint{})
	measured := make([]Record, len(pts))
	ended := make([]bool, len(pts))
	done := make(chan int, len(pts))
	var recs []Record
	var werr error
	started, running := 0, 0
	r.progress(0, len(pts), start, pts[0])
	for {
		for werr == nil && running < lanes && started < len(pts) && ctx.Err() == nil {
			i := started
			r.watch(len(recs), len(pts), start, &pts[i], nil)
			go func() {
				measured[i] = r.measureUnstolen(ctx, pts[i])
				done <- i
			}()
			started++
			running++
		}
		if running == 0 {
			break // all written, or nothing more starts
		}
		i := <-done
		running--
		ended[i] = true
		for n := len(recs); werr == nil && n < started && ended[n]; n = len(recs) {
			rec := measured[n]
			recs = append(recs, rec)
			werr = r.write(rec)
			r.watch(len(recs), len(pts), start, &pts[n], &rec)
			if len(recs) < len(pts) {
				r.progress(len(recs), len(pts), start, pts[len(recs)])
			}
		}
	}
	if werr != nil {
		return recs, werr
	}
	r.progress(len(recs), len(pts), start, Point{})
	r.watch(len(recs), len(pts), start, nil, nil)
	if r.Progress != nil {
		fmt.Fprintln(r.Progress)
	}
	return recs, ctx.Err()
}
