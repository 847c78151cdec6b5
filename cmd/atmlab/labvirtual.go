package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"

	"github.com/atmlab/atmlab/emulator/vhost"
	"github.com/atmlab/atmlab/harness/labrun"
	"github.com/atmlab/atmlab/harness/perf"
	"github.com/atmlab/atmlab/harness/vperf"
	"github.com/atmlab/atmlab/topologies"
)

// clocksOf reads lab run's --clock: the clocks each point is measured by.
func clocksOf(clock string) ([]string, error) {
	switch clock {
	case "", "real":
		return []string{"real"}, nil
	case "virtual":
		return []string{"virtual"}, nil
	case "both":
		return []string{"real", "virtual"}, nil
	}
	return nil, fmt.Errorf("unknown clock %q: use --clock real, virtual or both", clock)
}

// refuseVirtualUp is up's answer to --clock virtual.
func refuseVirtualUp(clock string) error {
	switch clock {
	case "", "real":
		return nil
	case "virtual", "both":
		return fmt.Errorf("atmlab up --clock %s: a virtual-time lab has no real hosts to attach to (no namespaces, no TAPs, nothing to exec into); run its experiments with `atmlab lab run FILE --clock virtual`", clock)
	}
	return fmt.Errorf("unknown clock %q: atmlab up runs in real time only (--clock real)", clock)
}

// virtualJobs is how many virtual points lab run measures at once: --jobs,
// or by default one per CPU.
func virtualJobs(jobs int) (int, error) {
	if jobs < 0 {
		return 0, fmt.Errorf("--jobs %d: give 1 or more virtual points at once (0: one per CPU, %d here)", jobs, runtime.NumCPU())
	}
	if jobs == 0 {
		return runtime.NumCPU(), nil
	}
	return jobs, nil
}

// procsIfVirtual sets GOMAXPROCS to jobs, the points measured at once, for
// a run whose clocks are all virtual and returns what restores it. A
// virtual point is one goroutine at a time (netstack's processors run only
// while the driver waits at a barrier), so a processor per point is all it
// uses; more buy nothing but handoffs between threads: one 10-s 100M TCP
// point used 1.53 s of CPU at GOMAXPROCS 1 and 2.25 s at 2 (1.5 k context
// switches against 51 k), byte-identical records. A run that measures in
// real time too keeps its processors (the emulator's loop and the hosts'
// tools need them), and so does one whose GOMAXPROCS the environment sets
// (scripts/determinism.sh compares runs under 2 and 1).
func procsIfVirtual(clocks []string, jobs int) (restore func()) {
	if len(clocks) == 0 || slices.ContainsFunc(clocks, func(c string) bool { return c != "virtual" }) || os.Getenv("GOMAXPROCS") != "" {
		return func() {}
	}
	prev := runtime.GOMAXPROCS(max(jobs, 1))
	return func() { runtime.GOMAXPROCS(prev) }
}

// virtualSetup is what a virtual run records beside its results: the
// stack's version and every setting that shapes a figure.
type virtualSetup struct {
	Stack       string                    `json:"stack"`
	Hosts       map[string]vhost.Settings `json:"hosts"`
	QueueFrames int                       `json:"host_queue_frames"`
	UDPQueue    int                       `json:"udp_stream_queue_frames"`
	StartAt     string                    `json:"start_at"`
	Seed        uint64                    `json:"seed"`
}

// runVirtual measures one variant of the lab on netstack hosts in model
// time: a lab built afresh for every point, no root, no namespaces.
func runVirtual(ctx context.Context, lab *topologies.Lab, r *labrun.Runner, out string) (int, error) {
	l, err := vperf.Build(lab, lab.Seed) // refuse what virtual hosts cannot honour before the first point
	if err != nil {
		return 0, err
	}
	setup := virtualSetup{Stack: vhost.Netstack, Hosts: map[string]vhost.Settings{}, QueueFrames: vhost.QueueFrames,
		UDPQueue: vperf.UDPQueue, StartAt: vperf.StartAt.String(), Seed: lab.Seed}
	for name, h := range l.Hosts {
		setup.Hosts[name] = h.Settings
	}
	l.Close()
	if err := labrun.WriteSetup(out, r.Variant, setup); err != nil {
		return 0, fmt.Errorf("virtual setup: %w", err)
	}
	r.Clock, r.Stack = "virtual", vhost.Netstack
	r.Perf = func(ctx context.Context, p labrun.Point, e *topologies.Experiment) (perf.Result, *labrun.BackgroundLoad, error) {
		return vperf.MeasureLoad(ctx, lab, p, e)
	}
	recs, err := r.Run(ctx)
	return len(recs), err
}
