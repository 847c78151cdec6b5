// Package labrun runs a lab file's experiments (`atmlab lab run`): the
// points of each variant, measured through the Env a backend brought up
// (package backend): atmlab perf, iperf3 or iperf 2 in the hosts of a
// real-time lab, or each point on a virtual-time lab of its own, written as they come
// to results.jsonl and results.csv; shards of a campaign, their identity
// and merge, and the live view's progress. It reads the results folders it
// writes (ReadRecords) but draws nothing: plotting is the report's.
package labrun

import (
	"cmp"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/atmlab/atmlab/emulator/hist"
	"github.com/atmlab/atmlab/harness/clock"
	"github.com/atmlab/atmlab/harness/perf"
	"github.com/atmlab/atmlab/harness/theory"
	"github.com/atmlab/atmlab/netstat"
	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/study"
)

// Env is how the backend that brought a lab up (package backend) has the
// runner measure its points: the backend drives the run (its Env's Run
// sets Runner.Env and calls Runner.Run) and hands its own measuring down
// as values, so the runner calls nothing above it and never asks which
// clock it is in. A real-time lab's is HostsEnv's, its tools' real sides
// run in its hosts; a virtual-time lab's measures each point on a lab of
// its own by its tool's virtual side (backend/virtual).
type Env struct {
	// Clock is the clock its points are measured by.
	Clock clock.Clock
	// OneAtATime: its points share one lab and the machine, so they are
	// measured one at a time whatever the run's Jobs; otherwise each is
	// on a lab of its own, as many at once as Jobs allows.
	OneAtATime bool
	// Measure measures one point by the side of its tool (ToolOf) for
	// this runtime, into rec: its Result and Error and what the runtime
	// records beside them (the emulator's health, the stack, the
	// background load). A Flag it sets stands unless the runner's
	// judgement finds a reason of its own.
	Measure func(ctx context.Context, r *Runner, p Point, e *study.Experiment, rec *Record)
	// FrameRate, if set, is the datagrams a second a bare veth pair
	// beside the lab carries with a point's tool, size and buffers (0:
	// not known), measured for a UDP stream point that fell short.
	FrameRate func(ctx context.Context, p Point) float64
}

// Point is one measurement of an experiment's matrix.
type Point struct {
	Variant    string `json:"variant"` // "base" is the lab as written
	Experiment string `json:"experiment"`
	Tool       string `json:"tool"`
	Test       string `json:"test"`
	Size       int    `json:"size"`    // message size, or request = response size; 0 = default
	SockBuf    int    `json:"sockbuf"` // 0 = system default
	Rep        int    `json:"repetition"`
	From       string `json:"from"`
	To         string `json:"to"`
	// Iteration is the run of the point being measured when its
	// experiment has a confidence: (from 0); its record holds all runs'
	// mean, so records do not carry it.
	Iteration int `json:"-"`
}

// Record is one line of results.jsonl: a point, its result, the path's
// theoretical ceiling, and the emulator's health while it ran.
type Record struct {
	Point
	Result       perf.Result `json:"result"`
	Ceiling      float64     `json:"ceiling_bps,omitempty"`
	AboveCeiling bool        `json:"above_ceiling,omitempty"`
	// EmulatorCPU is the fraction of a core the emulator used during a
	// real-time point, 0 and left out when unknown: in virtual time, where
	// the emulator's speed cannot shape a figure (it runs in model time)
	// and its CPU time would make the same run's records differ.
	EmulatorCPU float64 `json:"emulator_cpu,omitempty"`
	// HostDrops are the frames the hosts dropped at their TAPs' rings
	// during the point (before QdiscDrops was recorded, their qdiscs'
	// drops too).
	HostDrops uint64 `json:"host_drops,omitempty"`
	// LateHeld are the frames from the hosts the emulator let into its
	// model later than they came during the point, its model too far
	// behind the wall clock (they waited as if in the TAP).
	LateHeld uint64 `json:"late_held,omitempty"`
	// LateDropped are the frames the emulator dropped during the point
	// rather than hand them to a host later than its bound after their
	// model time (it had lost its core for longer).
	LateDropped uint64 `json:"late_dropped,omitempty"`
	// QdiscDrops and QdiscRequeues are the frames the senders' qdiscs in
	// front of their TAPs dropped and took back during the point.
	QdiscDrops    uint64 `json:"qdisc_drops,omitempty"`
	QdiscRequeues uint64 `json:"qdisc_requeues,omitempty"`
	// OtherLoad is how much of a core the machine spent during the point
	// on work outside the lab's own processes (its busy time from
	// /proc/stat less the emulator's, the runner's and the hosts' tools').
	OtherLoad float64 `json:"other_load,omitempty"`
	// ShortBy names what held back a real-time point more than 1 % short
	// of its ceiling (the Short* causes, as measured during it); empty
	// when it was not short.
	ShortBy []string `json:"short_by,omitempty"`
	// VethFrameRate is the datagrams a second a bare veth pair beside the
	// lab carried with the point's tool, size and buffers, measured (once
	// a run for each) when a UDP stream point fell short: where the
	// ceiling needs more, the hosts' own frame rate is the limit
	// (ShortHostRate).
	VethFrameRate float64 `json:"veth_frame_rate,omitempty"`
	// ReceiverBufferNeeded is, for a UDP point short by its receiver on
	// the tool's default buffer, the net.core.rmem_default that would hold
	// 10 ms of the receiving host's link's smallest frames
	// (Lab.SocketBufferDefault): what to raise it to on the machine, since
	// a host's namespace cannot.
	ReceiverBufferNeeded int `json:"receiver_buffer_needed,omitempty"`
	// Steal is the share of the machine's CPU (all its CPUs) that its
	// hypervisor took during the point (/proc/stat's steal): above
	// MaxSteal the point measured the VM's host as much as the lab.
	Steal float64 `json:"steal,omitempty"`
	// StealRetakes is how many times the point was measured again because
	// the hypervisor took more than MaxSteal during it (at most
	// StealRetakes); the record is the last measurement's.
	StealRetakes int `json:"steal_retakes,omitempty"`
	// HostKernel is what the hosts' kernels counted during the point, all
	// hosts summed: UDP datagrams sent and received, those lost inside a
	// host (a full receive buffer), TCP retransmissions.
	HostKernel *netstat.Counters `json:"host_kernel,omitempty"`
	VethRTT    float64           `json:"veth_rtt_us,omitempty"` // a ping over a plain veth pair when the lab came up: the baseline for this point's latency
	Flag       string            `json:"flag,omitempty"`        // why the emulator may have distorted this point
	Clock      string            `json:"clock,omitempty"`       // "virtual" when measured on netstack hosts in model time; empty: real time
	MeasuredBy string            `json:"measured_by,omitempty"` // the tool that measured an iperf3 or iperf point in virtual time (the experiment's virtual: atmlab)
	Stack      string            `json:"stack,omitempty"`       // the virtual hosts' TCP/IP stack and version
	Error      string            `json:"error,omitempty"`
	At         string            `json:"at"`
	// Changes are the atmlab set changes in force, oldest first: the
	// point measured the lab as changed, not as its file says.
	Changes []string `json:"changes,omitempty"`
	// Lateness is how late the emulator released frames against their
	// model times during the point (the emulator's own added latency, per
	// hop): a p99 or max far above p50 is a stall that may have cost it.
	Lateness *hist.Summary `json:"release_lateness,omitempty"`
	// LoopStall is the longest of the LoopStalls, the spells of more than
	// netstat.StallMin in which the emulator's loop did not come back to
	// its clock during the point, with what its thread did meanwhile;
	// EmulatorGCs are the collections the emulator's process made, and
	// EmulatorAllocated the bytes it allocated on its heap: what those
	// collections have to collect.
	LoopStall         *netstat.Stall `json:"loop_stall,omitempty"`
	LoopStalls        uint64         `json:"loop_stalls,omitempty"`
	EmulatorGCs       uint64         `json:"emulator_gcs,omitempty"`
	EmulatorAllocated uint64         `json:"emulator_allocated_bytes,omitempty"`
	// ReleaseSpacing is how far apart in model time the emulator released
	// frames to the same host during the point: the traffic its Lateness
	// was measured over (back to back for a stream, a transaction's time
	// for request/response, the interval for pings).
	ReleaseSpacing *hist.Summary `json:"release_spacing,omitempty"`
	// Background is what the experiment's background load did during the
	// point, if it has one.
	Background *BackgroundLoad `json:"background,omitempty"`
	// PathRTT is a ping from the point's sender to its receiver through
	// the emulator when the lab came up, median of 10 (µs): beside
	// VethRTT, what the emulated path adds.
	PathRTT float64 `json:"ping_rtt_us,omitempty"`
}

// BackgroundLoad is what an experiment's background load did while a
// point was measured: the point measured the path under it only if it ran
// throughout the point's duration.
type BackgroundLoad struct {
	From string `json:"from"`
	To   string `json:"to"`
	Test string `json:"test"`
	// SockBuf is the load's socket buffers in bytes (0: the default).
	SockBuf int `json:"sockbuf,omitempty"`
	// SentBps is what the load's sending host put on its links during the
	// point (its NICs' transmitted bytes, whatever else it sent).
	SentBps float64 `json:"sent_bps,omitempty"`
	// Error says why it did not run throughout: it ended before the
	// point's duration was over.
	Error string `json:"error,omitempty"`
}

// Points expands a lab's experiments into their measurement matrix.
func Points(lab *topologies.Lab) []Point {
	var pts []Point
	for _, e := range lab.Experiments {
		for _, test := range e.Tests {
			for _, size := range e.Sizes {
				for _, buf := range e.SockBufs {
					for rep := range e.Repetitions {
						pts = append(pts, Point{Experiment: e.Name, Tool: e.Tool, Test: test, Size: size, SockBuf: buf, Rep: rep + 1, From: e.From, To: e.To})
					}
				}
			}
		}
	}
	return pts
}

// DoneKey names a point measured by a clock ("" real time, "virtual"),
// as Runner.Done holds it.
func DoneKey(p Point, clock string) string { return PointKey(p) + "\x00" + clock }

// Runner runs a lab's experiments and writes every result as it comes, so
// that an interrupted run keeps what it measured.
type Runner struct {
	Variant  string // recorded with every point ("base" if empty)
	Lab      *topologies.Lab
	Env      Env       // how the backend driving the run measures its points, in either clock
	JSONL    io.Writer // results.jsonl
	CSV      *csv.Writer
	Progress io.Writer // a progress line with ETA; nil for none
	// Watch, if set, is called before each point and as its result lands
	// (watch.go).
	Watch   func(Progress)
	VethRTT time.Duration // the lab's veth probe (Prober; kernel.Loop.VethRTT), recorded with every point
	Shard   Shard         // the part of the campaign to measure; zero: all of it
	// Done is the points already measured (DoneKey): not measured again
	// (lab run --append).
	Done map[string]bool
	// Jobs is how many points the run may measure at once, each on its
	// own lab, unless its Env measures one at a time (a HostsEnv's points
	// share one lab and the machine); their records are written in order
	// all the same. Below 2: one at a time.
	Jobs int
	// Steal reads the machine's steal time (a HostsEnv's hosts', a
	// Stealer; a test's stand-in plays a hypervisor). nil: no steal is
	// recorded, and no point is measured again for it.
	Steal func() (time.Duration, error)
	// FrameRates keeps the veth pair's frame rates the Env measured
	// (Env.FrameRate), shared by a campaign's runners; nil: the runner's
	// own.
	FrameRates    *FrameRates
	awaitUnstolen func(context.Context) // nil: AwaitUnstolen for a second's quiet; a test's stand-in
	ov            *overlap              // set when its points run beside other variants' (Campaign.runOverlapped)
}

// Pending is the points the run is to measure: its variant's in its
// shard, less those already measured in its Env's clock (Done).
func (r *Runner) Pending() []Point {
	clk := r.Env.Clock.Key()
	return slices.DeleteFunc(ShardPoints(r.Lab, cmp.Or(r.Variant, "base"), r.Shard), func(p Point) bool { return r.Done[DoneKey(p, clk)] })
}

// Run measures every pending point in order by its Env, which the backend
// driving the run set. It returns the records so far when ctx ends.
func (r *Runner) Run(ctx context.Context) ([]Record, error) {
	pts := r.Pending()
	start := time.Now()
	lanes := r.Jobs
	if r.Env.OneAtATime {
		lanes = 1
	}
	if r.ov != nil || lanes > 1 && len(pts) > 1 {
		return r.runSideBySide(ctx, pts, start, max(lanes, 1))
	}
	var recs []Record
	for i, p := range pts {
		if ctx.Err() != nil {
			break
		}
		r.progress(i, len(pts), start, p)
		r.watch(i, len(pts), start, &p, nil)
		rec := r.measureUnstolen(ctx, p)
		recs = append(recs, rec)
		if err := r.write(rec); err != nil {
			return recs, err
		}
		r.watch(i+1, len(pts), start, &p, &rec)
	}
	r.progress(len(recs), len(pts), start, Point{})
	r.watch(len(recs), len(pts), start, nil, nil)
	if r.Progress != nil {
		fmt.Fprintln(r.Progress)
	}
	return recs, ctx.Err()
}

func (r *Runner) progress(done, total int, start time.Time, p Point) {
	if r.Progress == nil || total == 0 {
		return
	}
	const width = 30
	bar := strings.Repeat("=", width*done/total) + strings.Repeat(" ", width-width*done/total)
	eta := "?"
	if done > 0 {
		eta = (time.Since(start) / time.Duration(done) * time.Duration(total-done)).Round(time.Second).String()
	}
	what := ""
	if p.Test != "" {
		what = fmt.Sprintf("  %s %s size %d buf %d #%d", p.Experiment, p.Test, p.Size, p.SockBuf, p.Rep)
	}
	fmt.Fprintf(r.Progress, "\r[%s] %d/%d  ETA %-8s%-50s", bar, done, total, eta, what)
}

// errNoStealClock: a Runner without a steal clock records no steal.
var errNoStealClock = errors.New("no steal clock")

// steal reads the Runner's steal clock, if it has one.
func (r *Runner) steal() (time.Duration, error) {
	if r.Steal == nil {
		return 0, errNoStealClock
	}
	return r.Steal()
}

// measureUnstolen measures a point, and again, up to StealRetakes times,
// while the hypervisor took more than MaxSteal during it.
func (r *Runner) measureUnstolen(ctx context.Context, p Point) Record {
	rec := r.measure(ctx, p)
	for n := 1; n <= StealRetakes && rec.Steal > MaxSteal && ctx.Err() == nil; n++ {
		if r.awaitUnstolen != nil {
			r.awaitUnstolen(ctx)
		} else {
			AwaitUnstolen(ctx, r.Steal, time.Second, StealWait)
		}
		rec = r.measure(ctx, p)
		rec.StealRetakes = n
	}
	return rec
}

// StealWait is the longest a retake waits for the hypervisor to give the
// machine back (AwaitUnstolen): its bursts here lasted tens of seconds.
const StealWait = 30 * time.Second

// AwaitUnstolen waits until the hypervisor took no more than MaxSteal of
// the machine over a whole window, for at most max (or until ctx ends);
// steal nil reads netstat.Steal. It reports whether the machine was quiet.
func AwaitUnstolen(ctx context.Context, steal func() (time.Duration, error), window, max time.Duration) bool {
	if steal == nil {
		steal = netstat.Steal
	}
	deadline := time.Now().Add(max)
	for {
		s0, err := steal()
		if err != nil {
			return false // no steal to see: nothing to wait for
		}
		t0 := time.Now()
		select {
		case <-ctx.Done():
			return false
		case <-time.After(window):
		}
		s1, err := steal()
		if err != nil {
			return false
		}
		if netstat.StealShare(s1-s0, time.Since(t0)) <= MaxSteal {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}

// measure runs one point by its Env and judges it: flags it when the
// emulator may have distorted it, when it is above its ceiling, or when a
// stream stays more than 2 % below its ceiling with no error to say why.
func (r *Runner) measure(ctx context.Context, p Point) Record {
	e := r.experiment(p.Experiment)
	rec := Record{Point: p, At: time.Now().UTC().Format(time.RFC3339), Clock: r.Env.Clock.Key(), VethRTT: float64(r.VethRTT) / 1e3}
	r.Env.Measure(ctx, r, p, e, &rec)
	r.judge(p, &rec)
	if r.Env.FrameRate != nil && p.Test == perf.UDPStream && rec.below(0.99) {
		if r.FrameRates == nil {
			r.FrameRates = &FrameRates{}
		}
		if v := r.FrameRates.get(ctx, p, r.Env.FrameRate); v > 0 {
			rec.VethFrameRate = v
			r.judge(p, &rec)
		}
	}
	return rec
}

// Runs are a point's runs as its Env drives them: once, or, when its
// experiment has a confidence:, again until the confidence is reached
// (netperf's -I/-i), the result the last run's with the runs' mean as
// its figure. The Env calls down into them; they never call it back:
//
//	runs := labrun.RunsOf(p, e)
//	for p, ok := runs.Next(ctx); ok; p, ok = runs.Next(ctx) {
//		runs.Add(measure(p))
//	}
//	res, err := runs.Result(ctx)
type Runs struct {
	p    Point
	conf *perf.Runs // nil without a confidence:
	ran  bool
	res  perf.Result
	err  error
}

// RunsOf starts the runs of p, a point of e.
func RunsOf(p Point, e *study.Experiment) *Runs {
	r := &Runs{p: p}
	if c := e.Confidence; c != nil {
		r.conf, r.err = perf.Confidence{Level: c.Level, Width: c.Width, Min: c.Min, Max: c.Max}.Runs()
	}
	return r
}

// Next returns the point of the next run (its Iteration set), or false
// when the point is done.
func (r *Runs) Next(ctx context.Context) (Point, bool) {
	if r.conf == nil || r.err != nil { // one run, or a confidence: that is not one
		ok := !r.ran && r.err == nil
		r.ran = true
		return r.p, ok
	}
	p := r.p
	i, ok := r.conf.Next(ctx)
	p.Iteration = i
	return p, ok
}

// Add records a run's result.
func (r *Runs) Add(res perf.Result, err error) {
	if r.conf == nil {
		r.res, r.err = res, err
		return
	}
	r.conf.Add(res, err)
}

// Result is the point's result: the one run's, or the last run's with
// the runs' mean as its figure.
func (r *Runs) Result(ctx context.Context) (perf.Result, error) {
	if r.conf == nil || r.err != nil {
		return r.res, r.err
	}
	return r.conf.Result(ctx)
}

// runsAtMost is how many times each point of an experiment may be run.
func runsAtMost(e *study.Experiment) int {
	if e.Confidence == nil {
		return 1
	}
	return e.Confidence.Max
}

// MaxSteal is the share of the machine's CPU a hypervisor may take during
// a point before the point is measured again and, if the last try was
// stolen too, flagged. On a 2-vCPU VM whose steal came in bursts of 5-45 %
// for tens of seconds to minutes (quiet: 0-1 %), rate tests in the bursts
// read low even where a point's share stayed under 10 %: 1G TCP 849-938
// Mbit/s of 941, an AAL3/4 485-byte stream 1.4-1.6 % under its ceiling
// with releases up to 17 ms late, OC-3c AAL5 1396-byte points 1.5-3.6 %.
const MaxSteal = 0.03

// StealRetakes is how many times a point during which the hypervisor took
// more than MaxSteal is measured again: the figure of a stolen point says
// how busy the VM's host was, and a burst of steal lasts tens of seconds.
const StealRetakes = 2

// judge sets a record's ceiling and its flag; a flag its Env set (why its
// figures are missing) stands when judge finds no reason of its own.
func (r *Runner) judge(p Point, rec *Record) {
	if c, ok := r.ceiling(p, rec.Result); ok {
		rec.Ceiling = c
		rec.AboveCeiling = rec.AboveCeilingReason() != ""
	}
	rec.ShortBy = rec.shortfall()
	if k := rec.HostKernel; k != nil && k.UDPRcvbufErrors > 0 && rec.SockBuf == 0 && slices.Contains(rec.ShortBy, ShortReceiver) && r.Lab != nil {
		rec.ReceiverBufferNeeded = r.Lab.SocketBufferDefault(p.To)
	}
	overrun, busy := rec.causes()
	switch {
	case rec.Steal > MaxSteal:
		rec.Flag = fmt.Sprintf("the machine's hypervisor took %.0f%% of its CPU during this point (steal): the emulator stalled for reasons outside the lab", 100*rec.Steal)
	case rec.HostDrops > 0:
		rec.Flag = fmt.Sprintf("hosts dropped %d frames at their TAPs: the emulator fell behind", rec.HostDrops)
	case len(rec.ShortBy) > 0:
		rec.Flag = rec.ShortfallWords()
	case overrun:
		rec.Flag = fmt.Sprintf("%.1f%% of the ceiling: the hosts' sockets dropped %d datagrams with their receive buffers full: the receiving host, which shares the machine's CPUs with the sender and the emulator, could not keep up",
			100*rec.Result.ThroughputBps/rec.Ceiling, rec.HostKernel.UDPRcvbufErrors)
	case busy:
		rec.Flag = fmt.Sprintf("emulator CPU %.0f%%: it may have limited this point", 100*rec.EmulatorCPU)
	case rec.AboveCeiling:
		rec.Flag = rec.AboveCeilingReason()
	case rec.below(0.98):
		rec.Flag = fmt.Sprintf("%.0f%% of the ceiling (%d lost%s): not the link but the hosts' or the emulator's CPU, or a receiver that could not keep up, limited this point",
			100*rec.Result.ThroughputBps/rec.Ceiling, rec.Result.Lost, inHosts(rec.HostKernel))
	}
}

// causes reports what a judged record that fell more than 1 % below its
// ceiling may have been held back by: the hosts' sockets overflowed
// (overrun), or the emulator used more than 90 % of a core (busy; also
// with no ceiling to judge by). A point that reached its ceiling was
// limited by the link, however busy the emulator was.
func (rec *Record) causes() (overrun, busy bool) {
	short := rec.below(0.99)
	overrun = short && rec.HostKernel != nil && rec.HostKernel.UDPRcvbufErrors > 0
	busy = rec.EmulatorCPU > 0.9 && (rec.Ceiling == 0 || short)
	return overrun, busy
}

// below reports whether a judged record measured less than share of its
// ceiling without an error (one with no ceiling is never below it).
func (rec *Record) below(share float64) bool {
	return rec.Ceiling > 0 && rec.Result.ThroughputBps < share*rec.Ceiling && rec.Error == "" && rec.Result.Error == ""
}

// HeldBack reports whether the emulator or the machine under it may have
// held a judged point back: the hypervisor took more than MaxSteal, the
// hosts' TAPs dropped frames, or the point fell short with the hosts'
// sockets overflowing, the emulator busy or any other cause of ShortBy
// seen (its flag says which).
func (rec *Record) HeldBack() bool {
	overrun, busy := rec.causes()
	seen := len(rec.ShortBy) > 0 && rec.ShortBy[0] != ShortNone
	return rec.Steal > MaxSteal || rec.HostDrops > 0 || overrun || busy || seen
}

func (r *Runner) experiment(name string) *study.Experiment {
	for _, e := range r.Lab.Experiments {
		if e.Name == name {
			return e
		}
	}
	return nil
}

// target is the address a test from one host to another sends to: the
// loopback when they are the same host.
func target(lab *topologies.Lab, from, to string) string {
	if from == to {
		return "127.0.0.1"
	}
	return lab.Node(to).Address()
}

// ceiling is the theoretical goodput of a point's path, for the packets
// of the SCTP stack that measured it (pion's are shorter than a jumbo
// path's MTU; the kernel's and the virtual model's fill it).
func (r *Runner) ceiling(p Point, res perf.Result) (float64, bool) {
	size := res.Spec.Message
	if size == 0 {
		size = p.Size
	}
	return theory.StackCeiling(r.Lab, p.From, p.To, p.Test, size, res.Implementation)
}

// CSVHeader is the first line of results.csv, written once by whoever
// opens the file.
var CSVHeader = []string{"variant", "experiment", "tool", "test", "size", "sockbuf", "repetition", "throughput_mbps", "send_mbps",
	"transactions_per_sec", "latency_p50_us", "latency_p99_us", "lost", "ceiling_mbps", "emulator_cpu", "host_drops", "veth_rtt_us",
	"lateness_p50_us", "lateness_p99_us", "lateness_max_us", "error", "flag"}

// write appends a record to the JSON lines and CSV files and flushes them.
func (r *Runner) write(rec Record) error {
	if r.JSONL != nil {
		b, err := json.Marshal(rec)
		if err != nil {
			return err
		}
		if _, err := r.JSONL.Write(append(b, '\n')); err != nil {
			return err
		}
		if f, ok := r.JSONL.(*os.File); ok {
			if err := f.Sync(); err != nil {
				return err
			}
		}
	}
	if r.CSV != nil {
		if err := r.CSV.Write(CSVRow(rec)); err != nil {
			return err
		}
		r.CSV.Flush()
		return r.CSV.Error()
	}
	return nil
}

// CSVRow is a record's line of results.csv (CSVHeader's columns).
func CSVRow(rec Record) []string {
	res := rec.Result
	var p50, p99 string
	if res.Latency != nil {
		p50, p99 = fmt.Sprintf("%.1f", res.Latency.P50), fmt.Sprintf("%.1f", res.Latency.P99)
	}
	errText := rec.Error
	if errText == "" {
		errText = res.Error
	}
	var l50, l99, lmax string
	if l := rec.Lateness; l != nil && l.Count > 0 {
		l50, l99, lmax = usOf(l.P50), usOf(l.P99), usOf(l.Max)
	}
	return []string{rec.Variant, rec.Experiment, rec.Tool, rec.Test, strconv.Itoa(rec.Size), strconv.Itoa(rec.SockBuf), strconv.Itoa(rec.Rep),
		mbpsOf(res.ThroughputBps), mbpsOf(res.SendBps), fmt.Sprintf("%.1f", res.TransactionsPerSec), p50, p99,
		strconv.FormatUint(res.Lost, 10), mbpsOf(rec.Ceiling), fmt.Sprintf("%.2f", rec.EmulatorCPU), strconv.FormatUint(rec.HostDrops, 10), vethOf(rec.VethRTT),
		l50, l99, lmax, errText, rec.Flag}
}

func usOf(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d)/1e3) }

func vethOf(us float64) string {
	if us == 0 {
		return ""
	}
	return fmt.Sprintf("%.1f", us)
}

func mbpsOf(bps float64) string {
	if bps == 0 {
		return ""
	}
	return fmt.Sprintf("%.3f", bps/1e6)
}

// inHosts says how many datagrams the hosts' kernels lost inside
// themselves during a point, when any.
func inHosts(c *netstat.Counters) string {
	if c == nil || c.UDPDropped()+c.IfaceRxDrops == 0 {
		return ""
	}
	return fmt.Sprintf(", %d datagrams of them lost inside the receiving hosts' kernels (and %d frames at their interfaces)", c.UDPDropped(), c.IfaceRxDrops)
}
