package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"

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
	b, err := json.MarshalIndent(setup, "", "  ")
	if err == nil {
		err = writeResultsFile(filepath.Join(out, "virtual-"+r.Variant+".json"), append(b, '\n'), 0o644)
	}
	if err != nil {
		return 0, fmt.Errorf("virtual setup: %w", err)
	}
	r.Clock, r.Stack = "virtual", vhost.Netstack
	r.Perf = func(ctx context.Context, p labrun.Point, e *topologies.Experiment) (perf.Result, error) {
		return vperf.Measure(ctx, lab, p, e)
	}
	recs, err := r.Run(ctx)
	return len(recs), err
}
