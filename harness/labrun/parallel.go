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
// earlier one waits for it. The points start in startOrder's order; when
// ctx ends no further point starts, and those under way end and the
// unbroken first part of the points is written, as one at a time keeps.
//
// Beside other variants (r.ov set), its points take their lanes from the
// run's shared ones, it says when all have started, and it writes, watches
// and shows progress only once its turn has come; if by then the run has
// ended (an earlier variant failed, or an interrupt) it writes nothing.
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
	order := startOrder(r.Lab, pts)
	started, running := 0, 0
	var turn <-chan struct{}
	myTurn, abandoned := true, false
	if r.ov != nil && r.ov.turn != nil {
		turn, myTurn = r.ov.turn, false
	}
	if myTurn {
		r.takeTurn(len(pts), start, pts[0])
	}
	for {
		for werr == nil && !abandoned && running < lanes && started < len(pts) && ctx.Err() == nil {
			if !r.takeLane(ctx) {
				break
			}
			i := order[started]
			if myTurn {
				r.watch(len(recs), len(pts), start, &pts[i], nil)
			}
			go func() {
				measured[i] = r.measureUnstolen(ctx, pts[i])
				r.leaveLane()
				done <- i
			}()
			started++
			running++
		}
		if r.ov != nil && (started == len(pts) || werr != nil || abandoned || ctx.Err() != nil) {
			r.ov.allBegan()
		}
		if running == 0 && myTurn {
			break // all written, or nothing more starts
		}
		select {
		case i := <-done:
			running--
			ended[i] = true
		case <-turn:
			turn, myTurn = nil, true
			if ctx.Err() != nil {
				abandoned = true // the run ended before this variant's turn
				continue
			}
			r.takeTurn(len(pts), start, pts[len(recs)])
		}
		for n := len(recs); myTurn && !abandoned && werr == nil && n < len(pts) && ended[n]; n = len(recs) {
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
	if abandoned {
		return nil, ctx.Err()
	}
	r.progress(len(recs), len(pts), start, Point{})
	r.watch(len(recs), len(pts), start, nil, nil)
	if r.Progress != nil {
		fmt.Fprintln(r.Progress)
	}
	return recs, ctx.Err()
}

// takeTurn says the variant's turn has come: its log line and its first
// progress line.
func (r *Runner) takeTurn(total int, start time.Time, next Point) {
	if r.ov != nil && r.ov.onTurn != nil {
		r.ov.onTurn()
	}
	r.progress(0, total, start, next)
}

// takeLane waits for one of the run's shared lanes, if the points run
// beside other variants'; false if ctx ended first.
func (r *Runner) takeLane(ctx context.Context) bool {
	if r.ov == nil {
		return true
	}
	select {
	case r.ov.lanes <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

// leaveLane gives back a lane takeLane took.
func (r *Runner) leaveLane() {
	if r.ov != nil {
		<-r.ov.lanes
	}
}

// startOrder is the order side-by-side points start in: those whose
// experiment runs a background load (two streams, the longest points)
// first, each group in the points' order, so that a long point does not
// end the run alone on one core while the others idle. Records are
// written in the points' order all the same.
func startOrder(lab *topologies.Lab, pts []Point) []int {
	loaded := map[string]bool{}
	for _, e := range lab.Experiments {
		loaded[e.Name] = e.Background != nil
	}
	var first, rest []int
	for i, p := range pts {
		if loaded[p.Experiment] {
			first = append(first, i)
		} else {
			rest = append(rest, i)
		}
	}
	return append(first, rest...)
}
