package labrun

import (
	"context"
	"fmt"
	"sync"

	"github.com/atmlab/atmlab/harness/clock"
)

// overlap is what a variant's Runner shares with the variants measured
// beside it in an all-virtual campaign (Campaign.runOverlapped): the
// lanes, and its turn to write.
type overlap struct {
	// lanes holds a token for each point being measured, by any variant:
	// as many as the run's jobs.
	lanes chan struct{}
	// turn is closed once the variant before has written all it will
	// write (nil: the first variant's turn has come).
	turn <-chan struct{}
	// onTurn, if set, is called as the turn comes (the variant's log line).
	onTurn func()
	// began is closed once every point of the variant has started (or it
	// will start no more): the next variant may start its own.
	began     chan struct{}
	beganOnce sync.Once
	// wrote is closed once the variant has written all it will write:
	// the next variant's turn.
	wrote     chan struct{}
	wroteOnce sync.Once
}

func newOverlap(lanes chan struct{}, turn <-chan struct{}, onTurn func()) *overlap {
	return &overlap{lanes: lanes, turn: turn, onTurn: onTurn, began: make(chan struct{}), wrote: make(chan struct{})}
}

func (o *overlap) allBegan() { o.beganOnce.Do(func() { close(o.began) }) }
func (o *overlap) allWrote() { o.wroteOnce.Do(func() { close(o.wrote) }) }

// runOverlapped measures an all-virtual campaign's variants with their
// points side by side across variants, Jobs at a time: the next
// variant's points start as soon as the last of the one before have
// started, so no lane idles while a variant's last points end. A variant
// writes its records only once the one before has written all of its,
// so results.jsonl holds the same records in the same order as one
// variant at a time. The first variant that fails ends the run with its
// error, and the variants after it write nothing, as if never started.
func (c *Campaign) runOverlapped(ctx context.Context) (int, error) {
	lanes := make(chan struct{}, c.Jobs)
	type outcome struct {
		n   int
		err error
	}
	var (
		outs    []chan outcome
		mu      sync.Mutex
		cancels []context.CancelFunc // each variant's, in order
		failed  = -1                 // the first variant that failed
	)
	defer func() {
		for _, cancel := range cancels {
			cancel()
		}
	}()
	var turn <-chan struct{}
variants:
	for _, v := range c.Variants {
		for _, clk := range c.Clocks {
			n := c.todo(v, clk)
			if n == 0 {
				continue
			}
			mu.Lock()
			if failed >= 0 {
				mu.Unlock()
				break variants
			}
			k := len(cancels)
			vctx, cancel := context.WithCancel(ctx)
			cancels = append(cancels, cancel)
			mu.Unlock()
			ov := newOverlap(lanes, turn, func() {
				if c.Log != nil {
					fmt.Fprintf(c.Log, "%s (%s time): %d points%s; results in %s\n", v.Name, clk, n, ofShard(c.Shard), c.Out)
				}
			})
			r := &Runner{Variant: v.Name, Lab: v.Lab, JSONL: c.JSONL, CSV: c.CSV, Progress: c.Progress, Shard: c.Shard, Watch: c.Watch, Done: c.Done, Jobs: c.Jobs, FrameRates: &c.frameRates, ov: ov}
			out := make(chan outcome, 1)
			outs = append(outs, out)
			go func() {
				m, err := c.Measure(vctx, clk, r)
				if err != nil { // the variants after it write nothing: ended before their turn
					mu.Lock()
					if failed < 0 || k < failed {
						failed = k
					}
					for _, cancel := range cancels[k+1:] {
						cancel()
					}
					mu.Unlock()
				}
				ov.allBegan()
				ov.allWrote()
				out <- outcome{m, err}
			}()
			turn = ov.wrote
			<-ov.began
		}
	}
	total := 0
	var first error
	for _, out := range outs {
		o := <-out
		if first != nil {
			continue // ended after the failure, having written nothing
		}
		total += o.n
		first = o.err
	}
	return total, first
}

// overlaps says whether a campaign measures its variants' points side by
// side across variants: all its clocks virtual (each point on a lab of its
// own) and more than one job.
func (c *Campaign) overlaps() bool {
	return c.Jobs > 1 && c.Clocks.Only(clock.Virtual)
}
