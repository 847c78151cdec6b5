// Package virtual is the virtual-time backend: a lab's hosts as netstack
// stacks (emulator/vhost) on the emulator's scheduler, each point measured
// on a lab built afresh for it, in model time: no root, no namespaces, the
// same figures on every machine.
package virtual

import (
	"context"
	"fmt"
	"os"
	"runtime"

	"github.com/atmlab/atmlab/backend"
	"github.com/atmlab/atmlab/emulator/vhost"
	"github.com/atmlab/atmlab/harness/clock"
	"github.com/atmlab/atmlab/harness/labrun"
	"github.com/atmlab/atmlab/harness/vperf"
	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/split"
	"github.com/atmlab/atmlab/topologies/study"
)

// GCPercent is the garbage collector's GOGC for a virtual run (Go's
// default is 100): a point allocates a packet buffer or two per frame and
// keeps little, so collecting less often saves CPU and changes no record.
// MemoryLimit is the soft limit beside it, so that a large lab does not
// grow to five times its live heap.
const (
	GCPercent   = 400
	MemoryLimit = 4 << 30
)

// Backend readies labs for measuring in virtual time.
type Backend struct{}

func (Backend) Clock() clock.Clock { return clock.Virtual }

// Setup is what a virtual run records beside its results
// (virtual-VARIANT.json): the stack's version and every setting that
// shapes a figure.
type Setup struct {
	Stack       string                    `json:"stack"`
	Hosts       map[string]vhost.Settings `json:"hosts"`
	QueueFrames int                       `json:"host_queue_frames"`
	UDPQueue    int                       `json:"udp_stream_queue_frames"`
	StartAt     string                    `json:"start_at"`
	Seed        uint64                    `json:"seed"`
}

// Up builds the lab once, so that what virtual hosts cannot honour is
// refused before the first point, and records its setup in o.Out.
func (Backend) Up(_ context.Context, lab *topologies.Lab, o backend.Options) (backend.Env, error) {
	mode, err := ParseMode(o.Split)
	if err != nil {
		return nil, err
	}
	l, err := Build(lab, lab.Seed)
	if err != nil {
		return nil, err
	}
	if plan, _ := split.Of(lab); plan != nil && mode == Auto && os.Getenv("GOMAXPROCS") == "" {
		// A part a core: a run of one point at a time (GOMAXPROCS 1) too.
		runtime.GOMAXPROCS(max(runtime.GOMAXPROCS(0), min(len(plan.Parts), runtime.NumCPU())))
	}
	setup := Setup{Stack: vhost.Netstack, Hosts: map[string]vhost.Settings{}, QueueFrames: vhost.QueueFrames,
		UDPQueue: vperf.UDPQueue, StartAt: StartAt.String(), Seed: lab.Seed}
	for name, h := range l.Hosts {
		setup.Hosts[name] = h.Settings
	}
	l.Close()
	if o.Out != "" {
		if err := labrun.WriteSetup(o.Out, o.Variant, setup); err != nil {
			return nil, fmt.Errorf("virtual setup: %w", err)
		}
	}
	env := Env{lab: lab, mode: mode}
	if mode == Processes {
		self, err := os.Executable()
		if err != nil {
			return nil, err
		}
		env.parts = NewPartProcs(self)
	}
	return env, nil
}

// Env measures a lab's points in virtual time, each on a lab of its own
// by its tool's virtual side, side by side as the run's jobs allow: here,
// or on the run's point workers when it has them (With).
type Env struct {
	lab     *topologies.Lab
	workers *Workers
	variant string
	mode    Mode       // how a lab with parts: runs
	parts   *PartProcs // with mode Processes: the other parts' processes, kept from point to point
}

// With is the env measuring its points on workers, as variant of the
// run's plan.
func (e Env) With(workers *Workers, variant string) Env {
	e.workers, e.variant = workers, variant
	return e
}

var _ backend.Env = Env{}

// Close ends the part processes the env's points ran beside, if any.
func (e Env) Close() error {
	if e.parts != nil {
		return e.parts.Close()
	}
	return nil
}

// Run measures r's points: nothing stays up between them, and each is on
// a lab of its own, so as many at once as the run's jobs.
func (e Env) Run(ctx context.Context, r *labrun.Runner) ([]labrun.Record, error) {
	r.Env = labrun.Env{Clock: clock.Virtual, Measure: e.Measure}
	return r.Run(ctx)
}

// Measure measures the point (each of its confidence's runs) on a lab
// built for it, with what its background load did; an iperf3 or iperf
// point that atmlab perf's test stood in for says so.
func (e Env) Measure(ctx context.Context, _ *labrun.Runner, p labrun.Point, ex *study.Experiment, rec *labrun.Record) {
	if e.workers != nil {
		if err := e.workers.measure(ctx, e.variant, e.lab, p, rec); err != nil {
			rec.Error = err.Error()
		}
		return
	}
	e.measureHere(ctx, p, ex, rec)
}

// measureHere measures the point in this process.
func (e Env) measureHere(ctx context.Context, p labrun.Point, ex *study.Experiment, rec *labrun.Record) {
	rec.Stack = vhost.Netstack
	runs := labrun.RunsOf(p, ex)
	for p, ok := runs.Next(ctx); ok; p, ok = runs.Next(ctx) {
		var pr *procsRun
		if e.parts != nil {
			pr = &procsRun{pool: e.parts}
		}
		res, load, err := measurePoint(ctx, e.lab, p, ex, e.mode, pr)
		rec.Background = load // the last run's (a real-time load runs through all of a confidence's runs)
		runs.Add(res, err)
	}
	var err error
	rec.Result, err = runs.Result(ctx)
	if err != nil {
		rec.Error = err.Error()
	}
	if p.Tool != "" && p.Tool != study.DefaultTool && ex.Virtual != "" && rec.Result.Error == "" {
		rec.MeasuredBy = ex.Virtual
	}
}
