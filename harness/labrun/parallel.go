package labrun

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/study"
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

// startOrder is the order side-by-side points start in: longest first,
// so that a long point does not end the run alone on one core while the
// others idle. Those whose experiment runs a background load (two
// streams, measured longest) come first, then the rest by pointCost,
// each in the points' order where they tie. Records are written in the
// points' order all the same.
func startOrder(lab *topologies.Lab, pts []Point) []int {
	exps := map[string]*study.Experiment{}
	for _, e := range lab.Experiments {
		exps[e.Name] = e
	}
	loaded := func(p Point) bool { e := exps[p.Experiment]; return e != nil && e.Background != nil }
	cost := func(p Point) float64 {
		if e := exps[p.Experiment]; e != nil {
			return pointCost(p, e.Duration)
		}
		return 0
	}
	order := make([]int, len(pts))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		if la, lb := loaded(pts[a]), loaded(pts[b]); la != lb {
			if la {
				return -1
			}
			return 1
		}
		return cmp.Compare(cost(pts[b]), cost(pts[a]))
	})
	return order
}

// pointCost is what a point of duration d is expected to cost to measure
// in virtual time, in frames, for ordering only: its model time over the
// time a frame of its messages takes (a message's bytes in frames of at
// most 1460, plus 78 octets of headers, preamble and gap). What a
// point costs is its frames: a 1-s stream of 64-byte messages took ten
// times one of 1460 here, and request/response of 1 byte the most. A
// loopback crosses no link and costs least.
func pointCost(p Point, d time.Duration) float64 {
	if p.From == p.To {
		return 0
	}
	size := p.Size
	if size <= 0 || size > 1460 {
		size = 1460
	}
	return d.Seconds() / float64(size+78)
}
