package labrun

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"

	"github.com/atmlab/atmlab/harness/clock"
	"github.com/atmlab/atmlab/topologies"
)

// Variant is one variant of a lab as a run measures it.
type Variant struct {
	Name string
	Lab  *topologies.Lab // made and built once; quickened for --quick
}

// Plan makes the variants a lab run measures (the lab's Measured), each
// made and built now (ResolveVariants), so that a bad one fails before
// anything is measured, once the tools its study names are checked
// (CheckTools); with quick each is shrunk by Quicken.
func Plan(lab *topologies.Lab, quick bool) ([]Variant, error) {
	if err := CheckTools(lab); err != nil {
		return nil, err
	}
	names := lab.Measured()
	labs, err := lab.ResolveVariants(names)
	if err != nil {
		return nil, err
	}
	vs := make([]Variant, len(names))
	for i, name := range names {
		if quick {
			Quicken(labs[i], name)
		}
		vs[i] = Variant{name, labs[i]}
	}
	return vs, nil
}

// Campaign measures a plan's variants, each by each clock in turn, into
// one results set: the variant loop of atmlab lab run.
type Campaign struct {
	Variants []Variant
	Clocks   clock.Choice    // every variant is measured by each, in this order
	Shard    Shard           // the part of the campaign to measure; zero: all of it
	Done     map[string]bool // points already measured (DoneKey): not measured again
	// Self is the atmlab binary, run inside a real-time lab's hosts (its
	// backend's, through Measure).
	Self string
	// What every variant's Runner gets.
	JSONL    io.Writer
	CSV      *csv.Writer
	Progress io.Writer
	Watch    func(Progress)
	Jobs     int // virtual points measured at once (Runner.Jobs)
	// Log, if set, gets a line as each variant starts, naming Out.
	Log io.Writer
	Out string
	// Measure brings up r's variant with the clock's backend (a lab in
	// namespaces, or virtual hosts; backend/registry.Measure), runs r and
	// tears it down; it returns the points measured.
	Measure func(ctx context.Context, clk clock.Clock, r *Runner) (int, error)

	frameRates FrameRates // every variant's runner's (Runner.FrameRates)
}

// Points is how many points the campaign measures, every clock's.
func (c *Campaign) Points() int {
	n := 0
	for _, v := range c.Variants {
		n += len(ShardPoints(v.Lab, v.Name, c.Shard)) * len(c.Clocks)
	}
	return n
}

// todo is how many of a variant's points of the shard the clock has yet
// to measure.
func (c *Campaign) todo(v Variant, clk clock.Clock) int {
	n := 0
	for _, p := range ShardPoints(v.Lab, v.Name, c.Shard) {
		if !c.Done[DoneKey(p, clk.Key())] {
			n++
		}
	}
	return n
}

// Run measures the variants in order and returns how many points it
// measured; it stops at the first variant that fails (or when ctx ends)
// with that error.
func (c *Campaign) Run(ctx context.Context) (int, error) {
	if c.overlaps() {
		return c.runOverlapped(ctx)
	}
	total := 0
	for _, v := range c.Variants {
		for _, clk := range c.Clocks {
			n := c.todo(v, clk)
			if n == 0 {
				continue // nothing of the matrix (or of this shard, or not yet measured) runs in this variant
			}
			if c.Log != nil {
				fmt.Fprintf(c.Log, "%s (%s time): %d points%s; results in %s\n", v.Name, clk, n, ofShard(c.Shard), c.Out)
			}
			r := &Runner{Variant: v.Name, Lab: v.Lab, JSONL: c.JSONL, CSV: c.CSV, Progress: c.Progress, Shard: c.Shard, Watch: c.Watch, Done: c.Done, Jobs: c.Jobs, FrameRates: &c.frameRates}
			m, err := c.Measure(ctx, clk, r)
			total += m
			if err != nil {
				return total, err
			}
		}
	}
	return total, nil
}

// ofShard says which shard a count of points is, if any.
func ofShard(s Shard) string {
	if s.N == 0 {
		return ""
	}
	return " of shard " + s.String()
}
