package labrun

import (
	"cmp"
	"context"
	"fmt"
	"os/exec"
	"slices"
	"time"

	"github.com/atmlab/atmlab/emulator/hist"
	"github.com/atmlab/atmlab/harness/clock"
	"github.com/atmlab/atmlab/netstat"
	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/study"
)

// Hosts is a lab whose hosts run programs: points are measured by the
// experiments' tools run in them, on one lab for all points.
type Hosts interface {
	// Command returns a command that runs inside a host.
	Command(node string, args ...string) *exec.Cmd
	// Emulator reports the emulator's health so far.
	Emulator(ctx context.Context) (Health, error)
}

// Prober is a Hosts that probed a plain veth pair when it came up: the
// baseline recorded with every point (Record.VethRTT).
type Prober interface {
	VethRTT() time.Duration
}

// Stealer is a Hosts whose machine's steal time can be read
// (netstat.Steal for a lab on this machine).
type Stealer interface {
	Steal() (time.Duration, error)
}

// Health is what a lab's emulator has counted since it started; a point's
// figures are the difference between two.
type Health struct {
	CPU       time.Duration // the emulator's CPU time
	HostDrops uint64        // frames hosts dropped at their TAPs: the emulator fell behind
	LateHeld  uint64        // frames the emulator held back at ingress, its model too far behind the wall clock
	// LateDropped are the frames the emulator dropped rather than hand
	// them to a host later than its bound after their model time.
	LateDropped uint64
	// QdiscDrops and QdiscRequeues are the frames the hosts' qdiscs in
	// front of their TAPs dropped and took back.
	QdiscDrops, QdiscRequeues uint64
	// LabCPU is the CPU time the lab's own processes used (the emulator,
	// the runner, the tools in its hosts) and Busy the whole machine's
	// (netstat.Busy): the difference is the machine's other load. Both 0
	// when not known.
	LabCPU, Busy time.Duration
	Hosts        netstat.Counters // the sum of the hosts' own kernel counters
	// Lateness is how late the loop released frames against their model
	// times; nil if the emulator has no such record.
	Lateness *hist.Histogram
	// Spacing is how far apart in model time the loop released frames to
	// the same host: the traffic Lateness was measured over; nil if not
	// known.
	Spacing *hist.Histogram
	// Sent is the bytes each host's NICs transmitted, by host; nil if not
	// known.
	Sent map[string]uint64
	// Uptime is the emulator's loop's clock when it answered, Stalls its
	// record of its stalls (the latest and the longest), StallCount all
	// of them, GCCycles its process's collections and Allocated the bytes
	// it allocated on its heap; Uptime 0: not known.
	Uptime                          time.Duration
	Stalls                          []netstat.Stall
	StallCount, GCCycles, Allocated uint64
}

// Changer is an Env whose links may be changed at run time (atmlab set):
// every point records the changes made before it started.
type Changer interface {
	Changes(ctx context.Context) []string
}

// HostsEnv is the Env of a lab whose hosts run programs (its Hosts, a
// backend's: backend/linux): its points are measured one at a time on the
// one lab, each by its tool's real side, with atmlab perf servers up for
// the whole run and the emulator's health read around each point.
type HostsEnv struct {
	Hosts Hosts
	Lab   *topologies.Lab
	Self  string                      // the atmlab binary, run inside hosts
	paths map[[2]string]time.Duration // the paths' pings when the run began
}

// Env is how the runner measures the lab's points: one at a time, each by
// its tool's real side in the hosts.
func (h *HostsEnv) Env() Env {
	return Env{Clock: clock.Real, OneAtATime: true, Measure: h.Measure, FrameRate: h.vethFrameRate}
}

// Run measures r's points on the lab, driving the runner: atmlab perf
// servers up for the whole run (begin), then every point by the runner.
func (h *HostsEnv) Run(ctx context.Context, r *Runner) ([]Record, error) {
	r.Env = h.Env()
	end, err := h.begin(ctx, r, r.Pending())
	if err != nil {
		return nil, err
	}
	defer end()
	return r.Run(ctx)
}

// begin starts atmlab perf servers wherever an experiment or its
// background load sends, up (and listening) for the whole run, and pings
// the points' paths; it takes the hosts' veth probe and steal clock for
// the runner, where they have them.
func (h *HostsEnv) begin(ctx context.Context, r *Runner, pts []Point) (end func(), err error) {
	if p, ok := h.Hosts.(Prober); ok && r.VethRTT == 0 {
		r.VethRTT = p.VethRTT()
	}
	if s, ok := h.Hosts.(Stealer); ok && r.Steal == nil {
		r.Steal = s.Steal
	}
	var hosts []string
	for _, e := range h.Lab.Experiments {
		hosts = append(hosts, e.To)
		if e.Background != nil {
			hosts = append(hosts, e.Background.To)
		}
	}
	slices.Sort(hosts)
	stop, err := h.startPerfServers(slices.Compact(hosts))
	if err != nil {
		return nil, err
	}
	h.paths = h.pingPaths(ctx, pts)
	return stop, nil
}

// Measure runs a point's tool's real side, with the experiment's
// background load if any, and records what the emulator and the machine
// counted while it ran.
func (h *HostsEnv) Measure(ctx context.Context, r *Runner, p Point, e *study.Experiment, rec *Record) {
	if c, ok := h.Hosts.(Changer); ok {
		rec.Changes = c.Changes(ctx)
	}
	rec.PathRTT = float64(h.paths[[2]string{p.From, p.To}]) / 1e3
	var load *server
	if e.Background != nil {
		var err error
		if load, err = h.startLoad(e); err != nil {
			rec.Error = err.Error()
			return
		}
		defer load.stop()
		bg := e.Background
		rec.Background = &BackgroundLoad{From: bg.From, To: bg.To, Test: bg.Test, SockBuf: bg.SockBuf}
	}
	h0, qerr := h.Hosts.Emulator(ctx)
	s0, serr := r.steal()
	t0 := time.Now()
	tool := ToolOf(p.Tool)
	runs := RunsOf(p, e)
	for p, ok := runs.Next(ctx); ok; p, ok = runs.Next(ctx) {
		runs.Add(tool.Real(ctx, h, p, e))
	}
	var err error
	rec.Result, err = runs.Result(ctx)
	if err != nil {
		rec.Error = err.Error()
	}
	if load != nil {
		// A load that ended before the point's duration was over left
		// the path unloaded: the point did not measure the experiment.
		if why := load.endedBefore(t0.Add(e.Duration)); why != "" {
			rec.Background.Error = why
			rec.Error = cmp.Or(rec.Error, fmt.Sprintf("the background load was not running throughout the point's duration (%s): it measured the path without it", why))
		}
	}
	// Both queries or neither: a point's CPU and drops are what changed
	// while it ran, never what accumulated since the lab started.
	h1, err := h.Hosts.Emulator(ctx)
	if qerr == nil {
		qerr = err
	}
	if s1, err := r.steal(); serr == nil && err == nil {
		rec.Steal = netstat.StealShare(s1-s0, time.Since(t0))
	}
	if qerr != nil {
		rec.Flag = fmt.Sprintf("the emulator's counters could not be read (%v): this point has no CPU, drop or host counter figures", qerr)
		return
	}
	rec.EmulatorCPU = float64(h1.CPU-h0.CPU) / float64(time.Since(t0))
	rec.HostDrops = h1.HostDrops - h0.HostDrops
	rec.LateHeld = h1.LateHeld - h0.LateHeld
	rec.LateDropped = h1.LateDropped - h0.LateDropped
	rec.QdiscDrops, rec.QdiscRequeues = h1.QdiscDrops-h0.QdiscDrops, h1.QdiscRequeues-h0.QdiscRequeues
	if h0.Busy > 0 && h1.Busy > 0 {
		rec.OtherLoad = max(0, float64((h1.Busy-h0.Busy)-(h1.LabCPU-h0.LabCPU))/float64(time.Since(t0)))
	}
	d := h1.Hosts.Sub(h0.Hosts)
	rec.HostKernel = &d
	if rec.Background != nil && h1.Sent != nil {
		rec.Background.SentBps = 8 * float64(h1.Sent[rec.Background.From]-h0.Sent[rec.Background.From]) / time.Since(t0).Seconds()
	}
	if h0.Lateness != nil && h1.Lateness != nil {
		l := h1.Lateness.Since(h0.Lateness)
		s := l.Summary()
		rec.Lateness = &s
	}
	if h0.Uptime > 0 && h1.Uptime > 0 {
		rec.LoopStalls = h1.StallCount - h0.StallCount
		rec.EmulatorGCs = h1.GCCycles - h0.GCCycles
		rec.EmulatorAllocated = h1.Allocated - h0.Allocated
		if in := netstat.StallsIn(h1.Stalls, h0.Uptime, h1.Uptime); len(in) > 0 {
			rec.LoopStall = &in[0]
		}
	}
	if h0.Spacing != nil && h1.Spacing != nil {
		if l := h1.Spacing.Since(h0.Spacing); l.Count() > 0 {
			s := l.Summary()
			rec.ReleaseSpacing = &s
		}
	}
}
