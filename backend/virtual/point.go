package virtual

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"net/netip"
	"strings"
	"time"

	"github.com/atmlab/atmlab/backend/virtual/remote"
	"github.com/atmlab/atmlab/harness/labrun"
	"github.com/atmlab/atmlab/harness/perf"
	"github.com/atmlab/atmlab/harness/vperf"
	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/study"
)

// StartAt is the model time a point's test starts at, in a lab just built:
// nothing has happened yet, so every point starts from the same state.
const StartAt = 10 * time.Millisecond

// Measure runs one point of a lab's matrix in virtual time: a lab built
// afresh for it, on its own scheduler, seeded from the lab's seed and the
// point (so repetitions differ, and a point's figure does not depend on
// what ran before it). Experiments with iperf3 or iperf are skipped with
// the reason as the result's error.
func Measure(ctx context.Context, lab *topologies.Lab, p labrun.Point, e *study.Experiment) (perf.Result, error) {
	res, _, err := MeasureLoad(ctx, lab, p, e)
	return res, err
}

// MeasureLoad is Measure that also says what the experiment's background
// load did beside the point (nil without one), as a real-time record does:
// its sender's NIC bytes over the point's model time.
func MeasureLoad(ctx context.Context, lab *topologies.Lab, p labrun.Point, e *study.Experiment) (perf.Result, *labrun.BackgroundLoad, error) {
	return MeasureSplit(ctx, lab, p, e, Auto)
}

// MeasureSplit is MeasureLoad with a lab with parts: run as mode says.
func MeasureSplit(ctx context.Context, lab *topologies.Lab, p labrun.Point, e *study.Experiment, mode Mode) (perf.Result, *labrun.BackgroundLoad, error) {
	return measurePoint(ctx, lab, p, e, mode, nil)
}

// measurePoint is MeasureSplit; pr, for Processes, is how this process takes
// part (nil: the run's, starting the others from this executable).
func measurePoint(ctx context.Context, lab *topologies.Lab, p labrun.Point, e *study.Experiment, mode Mode, pr *procsRun) (res perf.Result, load *labrun.BackgroundLoad, err error) {
	spec := perf.Spec{Test: p.Test, Duration: e.Duration, Interval: e.Interval, SendBuf: p.SockBuf, RecvBuf: p.SockBuf}
	if strings.HasSuffix(p.Test, "_RR") {
		spec.Request, spec.Response = p.Size, p.Size
	} else {
		spec.Message = p.Size
	}
	res = perf.Result{Schema: perf.SchemaVersion, Test: p.Test, Spec: spec}
	if err := labrun.NativeSpec(lab, p.From, p.To, &spec); err != nil {
		return res, nil, err
	}
	run, skip := labrun.ToolOf(p.Tool).Virtual(e)
	if skip != nil {
		res.Error = skip.Error()
		return res, nil, nil
	}
	if err := ctx.Err(); err != nil {
		return res, nil, err
	}
	l, err := buildPoint(lab, PointSeed(lab.Seed, p), mode, p, e.Background, pr)
	if err != nil {
		return res, nil, err
	}
	defer l.close()
	defer func() { // a part's process failed or went: the point fails, naming it
		if r := recover(); r != nil {
			f, ok := r.(*remote.Fault)
			if !ok {
				panic(r)
			}
			err = f
		}
	}()
	addr := func(host string) (netip.Addr, error) {
		a, err := netip.ParseAddr(lab.Node(host).Address())
		if err != nil {
			return a, fmt.Errorf("host %s has no IPv4 address to test to", host)
		}
		return a, nil
	}
	to, err := addr(p.To)
	if err != nil {
		return res, nil, err
	}
	l.runUntil(StartAt)
	if bg := e.Background; bg != nil {
		load = &labrun.BackgroundLoad{From: bg.From, To: bg.To, Test: bg.Test, SockBuf: bg.SockBuf}
		bto, err := addr(bg.To)
		if err != nil {
			return res, load, err
		}
		bspec := perf.Spec{Test: bg.Test, Duration: e.Duration + 3*time.Second, Message: bg.Size, SendBuf: bg.SockBuf, RecvBuf: bg.SockBuf}
		if strings.HasSuffix(bg.Test, "_RR") {
			bspec.Message, bspec.Request, bspec.Response = 0, bg.Size, bg.Size
		}
		if _, err := vperf.Start(vperf.Test{Lab: l.labOf(bg.From), From: bg.From, To: bg.To, Addr: bto, Spec: bspec}); err != nil {
			load.Error = err.Error()
			return res, load, fmt.Errorf("background %s: %w", bg.Test, err)
		}
		l.runUntil(l.now() + time.Second) // the load reaches steady state first, as in real time
	}
	var f figures
	tl := l.labOf(p.From)
	t0 := l.now()
	if load != nil {
		f.Tx0 = l.hosts[load.From].TxBytes
	}
	if l.procs == nil || l.procs.Runs(p.From) {
		res, err = run(vperf.Test{Lab: tl, From: p.From, To: p.To, Addr: to, Spec: spec})
		f.Now = tl.Sched.Now()
		if l.procs != nil {
			l.procs.Group.End()
		}
		if load != nil {
			f.Tx1 = l.hosts[load.From].TxBytes
		}
	} else {
		// A part following the test's may run past its end: it says the
		// load's bytes as they stood there.
		var sent func() uint64
		if load != nil && l.procs.Runs(load.From) {
			h := l.hosts[load.From]
			sent = func() uint64 { return h.TxBytes }
		}
		tx := l.procs.Group.Follow(l.procs.index[l.procs.Plan.PartOf(p.From)], sent)
		if load != nil {
			f.Tx1 = tx
		}
	}
	if l.procs != nil {
		f.Result, f.Failed = res, err != nil
		if err != nil {
			f.Err = err.Error()
		}
		bgPart := -1
		if load != nil {
			bgPart = l.procs.index[l.procs.Plan.PartOf(load.From)]
		}
		if f, err = l.gather(l.procs.index[l.procs.Plan.PartOf(p.From)], bgPart, f); err != nil {
			return res, load, err
		}
		if pr != nil {
			pr.gathered = true
		}
		res, err = f.Result, nil
		if f.Failed {
			err = errors.New(f.Err)
		}
		if serr := l.done(); serr != nil && err == nil {
			err = serr
		}
	}
	if dt := f.Now - t0; load != nil && dt > 0 {
		load.SentBps = 8 * float64(f.Tx1-f.Tx0) / dt.Seconds()
	}
	return res, load, err
}

// PointSeed is the seed a point's lab is built with; a confidence's runs
// of one point after the first are seeded apart too.
func PointSeed(seed uint64, p labrun.Point) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%s/%s/%d/%d/%d", p.Variant, p.Experiment, p.Test, p.Size, p.SockBuf, p.Rep)
	if p.Iteration > 0 {
		fmt.Fprintf(h, "/%d", p.Iteration)
	}
	return seed ^ h.Sum64()
}
