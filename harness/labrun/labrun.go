// Package labrun runs a lab file's experiments (`atmlab lab run`): the
// points of each variant, measured through an Env with atmlab perf, iperf3
// or iperf 2 in the hosts or by a virtual-time Perf, written as they come
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
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/atmlab/atmlab/harness/perf"
	"github.com/atmlab/atmlab/harness/theory"
	"github.com/atmlab/atmlab/netstat"
	"github.com/atmlab/atmlab/topologies"
)

// Env is what the experiment runner needs of a running lab.
type Env interface {
	// Command returns a command that runs inside a host.
	Command(node string, args ...string) *exec.Cmd
	// Emulator reports the emulator's CPU time so far, the frames hosts
	// dropped at their TAPs (the emulator fell behind) and the sum of the
	// hosts' own kernel counters (netstat).
	Emulator(ctx context.Context) (cpu time.Duration, hostDrops uint64, hosts netstat.Counters, err error)
}

// Changer is an Env whose links may be changed at run time (atmlab set):
// every point records the changes made before it started.
type Changer interface {
	Changes(ctx context.Context) []string
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
}

// Record is one line of results.jsonl: a point, its result, the path's
// theoretical ceiling, and the emulator's health while it ran.
type Record struct {
	Point
	Result       perf.Result `json:"result"`
	Ceiling      float64     `json:"ceiling_bps,omitempty"`
	AboveCeiling bool        `json:"above_ceiling,omitempty"`
	EmulatorCPU  float64     `json:"emulator_cpu"` // fraction of a core during the point
	HostDrops    uint64      `json:"host_drops,omitempty"`
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

// Runner runs a lab's experiments and writes every result as it comes, so
// that an interrupted run keeps what it measured.
type Runner struct {
	Variant  string // recorded with every point ("base" if empty)
	Lab      *topologies.Lab
	Env      Env
	Self     string    // the atmlab binary, run inside hosts
	JSONL    io.Writer // results.jsonl
	CSV      *csv.Writer
	Progress io.Writer // a progress line with ETA; nil for none
	// Watch, if set, is called before each point and as its result lands
	// (watch.go).
	Watch func(Progress)
	// Perf, if set, measures each point instead of tools run in the hosts
	// through Env (a virtual-time lab: no servers, no Env needed); Clock
	// and Stack are recorded with every point.
	Perf         func(ctx context.Context, p Point, e *topologies.Experiment) (perf.Result, error)
	Clock, Stack string
	VethRTT      time.Duration // the lab's veth probe (kernel.Loop.VethRTT), recorded with every point
	Shard        Shard         // the part of the campaign to measure; zero: all of it
}

// perfPort is where lab runs start atmlab perf servers; iperf3 uses its own.
const (
	perfPort   = perf.DefaultPort
	iperf3Port = 5201
	iperf2Port = 5001
)

// Run measures every point in order. It returns the records so far when
// ctx ends.
func (r *Runner) Run(ctx context.Context) ([]Record, error) {
	pts := ShardPoints(r.Lab, cmp.Or(r.Variant, "base"), r.Shard)
	servers := map[string]bool{}
	for _, e := range r.Lab.Experiments {
		servers[e.To] = true
		if e.Background != nil {
			servers[e.Background.To] = true
		}
	}
	for host := range servers {
		if r.Perf != nil {
			break
		}
		cmd := r.Env.Command(host, r.Self, "perf", "server", "-p", strconv.Itoa(perfPort))
		if err := cmd.Start(); err != nil {
			return nil, fmt.Errorf("start perf server in %s: %w", host, err)
		}
		defer func() { cmd.Process.Kill(); cmd.Wait() }()
	}
	if r.Perf == nil {
		time.Sleep(300 * time.Millisecond) // the servers listen
	}
	var recs []Record
	start := time.Now()
	for i, p := range pts {
		if ctx.Err() != nil {
			break
		}
		r.progress(i, len(pts), start, p)
		r.watch(i, len(pts), start, &p, nil)
		var changes []string
		if c, ok := r.Env.(Changer); ok {
			changes = c.Changes(ctx)
		}
		rec := r.measure(ctx, p)
		rec.Changes = changes
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

// measure runs one point, with its background load if any, and flags it
// when the emulator may have distorted it, when it is above its ceiling, or
// when a stream stays more than 2 % below its ceiling with no error to say why.
func (r *Runner) measure(ctx context.Context, p Point) Record {
	e := r.experiment(p.Experiment)
	rec := Record{Point: p, At: time.Now().UTC().Format(time.RFC3339), Clock: r.Clock, Stack: r.Stack, VethRTT: float64(r.VethRTT) / 1e3}
	if r.Perf != nil {
		var err error
		if rec.Result, err = r.Perf(ctx, p, e); err != nil {
			rec.Error = err.Error()
		}
		if p.Tool != "" && p.Tool != "atmlab" && e.Virtual != "" && rec.Result.Error == "" {
			rec.MeasuredBy = e.Virtual
		}
		r.judge(p, &rec)
		return rec
	}
	if e.Background != nil {
		bg := e.Background
		cmd := r.Env.Command(bg.From, r.Self, "perf", "client", "-H", target(r.Lab, bg.From, bg.To), "-p", strconv.Itoa(perfPort),
			"-t", bg.Test, "-m", strconv.Itoa(bg.Size), "-l", (e.Duration + 3*time.Second).String())
		if err := cmd.Start(); err == nil {
			defer func() { cmd.Process.Kill(); cmd.Wait() }()
			time.Sleep(time.Second) // the load reaches steady state first
		}
	}
	cpu0, drops0, hosts0, qerr := r.Env.Emulator(ctx)
	t0 := time.Now()
	var err error
	switch p.Tool {
	case "iperf3":
		rec.Result, err = r.iperf3(ctx, p, e)
	case "iperf":
		rec.Result, err = r.iperf2(ctx, p, e)
	default:
		rec.Result, err = r.atmlabPerf(ctx, p, e)
	}
	if err != nil {
		rec.Error = err.Error()
	}
	// Both queries or neither: a point's CPU and drops are what changed
	// while it ran, never what accumulated since the lab started.
	cpu1, drops1, hosts1, err := r.Env.Emulator(ctx)
	if qerr == nil {
		qerr = err
	}
	if qerr == nil {
		rec.EmulatorCPU = float64(cpu1-cpu0) / float64(time.Since(t0))
		rec.HostDrops = drops1 - drops0
		d := hosts1.Sub(hosts0)
		rec.HostKernel = &d
	}
	r.judge(p, &rec)
	if qerr != nil && rec.Flag == "" {
		rec.Flag = fmt.Sprintf("the emulator's counters could not be read (%v): this point has no CPU, drop or host counter figures", qerr)
	}
	return rec
}

// judge sets a record's ceiling and its flag.
func (r *Runner) judge(p Point, rec *Record) {
	if c, ok := r.ceiling(p, rec.Result); ok {
		rec.Ceiling = c
		rec.AboveCeiling = rec.Result.ThroughputBps > c*1.01
	}
	switch {
	case rec.HostDrops > 0:
		rec.Flag = fmt.Sprintf("hosts dropped %d frames at their TAPs: the emulator fell behind", rec.HostDrops)
	case rec.EmulatorCPU > 0.9:
		rec.Flag = fmt.Sprintf("emulator CPU %.0f%%: it may have limited this point", 100*rec.EmulatorCPU)
	case rec.AboveCeiling:
		rec.Flag = "above the path's theoretical ceiling"
	case rec.Ceiling > 0 && rec.Result.ThroughputBps < 0.98*rec.Ceiling && rec.Error == "" && rec.Result.Error == "":
		rec.Flag = fmt.Sprintf("%.0f%% of the ceiling (%d lost%s): not the link but the hosts' or the emulator's CPU, or a receiver that could not keep up, limited this point",
			100*rec.Result.ThroughputBps/rec.Ceiling, rec.Result.Lost, inHosts(rec.HostKernel))
	}
}

func (r *Runner) experiment(name string) *topologies.Experiment {
	for _, e := range r.Lab.Experiments {
		if e.Name == name {
			return e
		}
	}
	return nil
}

// atmlabPerf runs atmlab's own client in the `from` host.
func (r *Runner) atmlabPerf(ctx context.Context, p Point, e *topologies.Experiment) (perf.Result, error) {
	args := []string{r.Self, "perf", "client", "-H", target(r.Lab, p.From, p.To), "-p", strconv.Itoa(perfPort),
		"-t", p.Test, "-l", e.Duration.String(), "-o", "json"}
	if p.Size > 0 {
		if strings.HasSuffix(p.Test, "_RR") {
			args = append(args, "-r", fmt.Sprintf("%d,%d", p.Size, p.Size))
		} else {
			args = append(args, "-m", strconv.Itoa(p.Size))
		}
	}
	if p.SockBuf > 0 {
		args = append(args, "-s", strconv.Itoa(p.SockBuf), "-S", strconv.Itoa(p.SockBuf))
	}
	if e.Interval > 0 {
		args = append(args, "-i", e.Interval.String())
	}
	out, err := r.Env.Command(p.From, args...).Output()
	var res perf.Result
	if jerr := json.Unmarshal(out, &res); jerr != nil {
		if err == nil {
			err = jerr
		}
		return res, fmt.Errorf("perf client: %w: %s", err, stderrOf(err))
	}
	return res, nil
}

// iperf3 runs the same point with iperf3 -J and folds its report into a
// Result: TCP from end.sum_received, UDP from the receiver's per-second
// intervals (iperf3's end-of-test UDP receiver figure divides by a window
// the control connection stretches, docs/reference.md §9).
func (r *Runner) iperf3(ctx context.Context, p Point, e *topologies.Experiment) (perf.Result, error) {
	res := toolResult(r.Lab, p, e)
	if p.Test != perf.TCPStream && p.Test != perf.UDPStream {
		res.Error = "iperf3 has no " + p.Test
		return res, nil
	}
	var interval []string
	if e.Interval > 0 {
		interval = []string{"-i", strconv.FormatFloat(e.Interval.Seconds(), 'f', -1, 64)}
	}
	srv := r.Env.Command(p.To, append([]string{"iperf3", "-s", "-1", "-J", "-p", strconv.Itoa(iperf3Port)}, interval...)...)
	if err := srv.Start(); err != nil {
		return res, fmt.Errorf("iperf3 server: %w", err)
	}
	defer func() { srv.Process.Kill(); srv.Wait() }()
	args := []string{"iperf3", "-c", res.Host, "-p", strconv.Itoa(iperf3Port), "-J", "--get-server-output",
		"-t", strconv.Itoa(max(1, int(e.Duration.Seconds())))}
	if p.Test == perf.UDPStream {
		args = append(args, "-u", "-b", "0")
	}
	if p.Size > 0 {
		args = append(args, "-l", strconv.Itoa(p.Size))
	}
	if p.SockBuf > 0 {
		args = append(args, "-w", strconv.Itoa(p.SockBuf))
	}
	args = append(args, interval...)
	var out []byte
	var err error
	out, res.CPU.Local, err = r.untilServed(p.From, args, func(out []byte, err error) bool {
		return err == nil || !strings.Contains(string(out), "unable to connect")
	})
	var rep struct {
		End struct {
			SumSent struct {
				Bytes   float64 `json:"bytes"`
				Bps     float64 `json:"bits_per_second"`
				Seconds float64 `json:"seconds"`
			} `json:"sum_sent"`
			SumReceived struct {
				Bytes float64 `json:"bytes"`
				Bps   float64 `json:"bits_per_second"`
			} `json:"sum_received"`
			Sum struct {
				Bps     float64 `json:"bits_per_second"`
				Packets uint64  `json:"packets"`
				Lost    uint64  `json:"lost_packets"`
				Jitter  float64 `json:"jitter_ms"`
			} `json:"sum"`
		} `json:"end"`
		Server struct {
			Intervals []struct {
				Sum struct {
					Start   float64 `json:"start"`
					End     float64 `json:"end"`
					Seconds float64 `json:"seconds"`
					Bps     float64 `json:"bits_per_second"`
				} `json:"sum"`
			} `json:"intervals"`
		} `json:"server_output_json"`
		Error string `json:"error"`
	}
	if jerr := json.Unmarshal(out, &rep); jerr != nil {
		return res, fmt.Errorf("iperf3: %v: %s", err, out)
	}
	if rep.Error != "" {
		res.Error = "iperf3: " + rep.Error
		return res, nil
	}
	res.Elapsed = rep.End.SumSent.Seconds
	switch p.Test {
	case perf.TCPStream:
		res.ThroughputBps, res.BytesReceived = rep.End.SumReceived.Bps, uint64(rep.End.SumReceived.Bytes)
	case perf.UDPStream:
		res.SendBps = rep.End.SumSent.Bps
		var sum float64
		var n int
		for _, iv := range rep.Server.Intervals {
			if iv.Sum.Seconds > 0.9 {
				sum += iv.Sum.Bps
				n++
			}
			if e.Interval > 0 { // the receiver's interval reports, as iperf3 -i prints them
				res.Intervals = append(res.Intervals, perf.Interval{Start: iv.Sum.Start, End: iv.Sum.End, Bps: iv.Sum.Bps})
			}
		}
		if n > 0 {
			res.ThroughputBps = sum / float64(n)
		}
		res.Lost, res.MessagesReceived, res.JitterUs = rep.End.Sum.Lost, rep.End.Sum.Packets-rep.End.Sum.Lost, rep.End.Sum.Jitter*1e3
	}
	return res, nil
}

// toolResult is the start of an external tool's result for a point.
func toolResult(lab *topologies.Lab, p Point, e *topologies.Experiment) perf.Result {
	return perf.Result{Schema: perf.SchemaVersion, Test: p.Test, Host: target(lab, p.From, p.To), Spec: perf.Spec{Test: p.Test, Duration: e.Duration, Message: p.Size}}
}

// untilServed runs a tool's client in a host, again every 100 ms (20 times
// at most) until served says its server was listening. It returns the
// output and the CPU the client used (user and system, as a fraction of one
// core over its run time): the same measure for every tool, since atmlab
// exec becomes the tool itself.
func (r *Runner) untilServed(node string, args []string, served func(out []byte, err error) bool) (out []byte, cpu float64, err error) {
	for try := 0; try < 20; try++ {
		time.Sleep(100 * time.Millisecond)
		cmd := r.Env.Command(node, args...)
		t0 := time.Now()
		out, err = cmd.Output()
		if st := cmd.ProcessState; st != nil {
			cpu = float64(st.UserTime()+st.SystemTime()) / float64(time.Since(t0))
		}
		if served(out, err) {
			break
		}
	}
	return out, cpu, err
}

// iperf2 runs a TCP_STREAM point with iperf 2 (-y C, CSV reports). The
// figure is the server's: the bytes it received over its interval; the
// client's, what it wrote, stands in if the server printed none.
func (r *Runner) iperf2(ctx context.Context, p Point, e *topologies.Experiment) (perf.Result, error) {
	res := toolResult(r.Lab, p, e)
	if p.Test != perf.TCPStream {
		res.Error = "the iperf (2) driver runs TCP_STREAM only"
		return res, nil
	}
	port := strconv.Itoa(iperf2Port)
	srv := r.Env.Command(p.To, "iperf", "-s", "-p", port, "-y", "C")
	var srvOut strings.Builder
	srv.Stdout = &srvOut
	if err := srv.Start(); err != nil {
		return res, fmt.Errorf("iperf server: %w", err)
	}
	args := []string{"iperf", "-c", res.Host, "-p", port, "-y", "C", "-t", strconv.Itoa(max(1, int(e.Duration.Seconds())))}
	if p.Size > 0 {
		args = append(args, "-l", strconv.Itoa(p.Size))
	}
	if p.SockBuf > 0 {
		args = append(args, "-w", strconv.Itoa(p.SockBuf))
	}
	var out []byte
	var err error
	out, res.CPU.Local, err = r.untilServed(p.From, args, func(out []byte, err error) bool { return err == nil && len(out) > 0 })
	time.Sleep(200 * time.Millisecond) // the server prints when the connection closes
	srv.Process.Signal(os.Interrupt)
	srv.Wait()
	if err != nil {
		return res, fmt.Errorf("iperf: %v: %s", err, stderrOf(err))
	}
	for _, text := range []string{srvOut.String(), string(out)} {
		if bytes, bps, secs, ok := iperf2CSV(text); ok {
			res.BytesReceived, res.ThroughputBps, res.Elapsed = bytes, bps, secs
			return res, nil
		}
	}
	res.Error = "iperf: no report: " + strings.TrimSpace(string(out))
	return res, nil
}

// iperf2CSV reads the last report line of iperf 2's -y C output:
// time,src,sport,dst,dport,id,start-end,bytes,bits_per_second.
func iperf2CSV(text string) (bytes uint64, bps, secs float64, ok bool) {
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		f := strings.Split(strings.TrimSpace(line), ",")
		if len(f) < 9 {
			continue
		}
		b, err1 := strconv.ParseUint(f[7], 10, 64)
		v, err2 := strconv.ParseFloat(f[8], 64)
		lo, hi, _ := strings.Cut(f[6], "-")
		l, err3 := strconv.ParseFloat(lo, 64)
		h, err4 := strconv.ParseFloat(hi, 64)
		if err1 == nil && err2 == nil && err3 == nil && err4 == nil {
			bytes, bps, secs, ok = b, v, h-l, true
		}
	}
	return
}

func stderrOf(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return strings.TrimSpace(string(ee.Stderr))
	}
	return ""
}

// target is the address a test from one host to another sends to: the
// loopback when they are the same host.
func target(lab *topologies.Lab, from, to string) string {
	if from == to {
		return "127.0.0.1"
	}
	return lab.Node(to).Address()
}

// ceiling is the theoretical goodput of a point's path.
func (r *Runner) ceiling(p Point, res perf.Result) (float64, bool) {
	size := res.Spec.Message
	if size == 0 {
		size = p.Size
	}
	return theory.PathCeiling(r.Lab, p.From, p.To, p.Test, size)
}

// CSVHeader is the first line of results.csv, written once by whoever
// opens the file.
var CSVHeader = []string{"variant", "experiment", "tool", "test", "size", "sockbuf", "repetition", "throughput_mbps", "send_mbps",
	"transactions_per_sec", "latency_p50_us", "latency_p99_us", "lost", "ceiling_mbps", "emulator_cpu", "host_drops", "veth_rtt_us", "error", "flag"}

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
			f.Sync()
		}
	}
	if r.CSV != nil {
		r.CSV.Write(CSVRow(rec))
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
	return []string{rec.Variant, rec.Experiment, rec.Tool, rec.Test, strconv.Itoa(rec.Size), strconv.Itoa(rec.SockBuf), strconv.Itoa(rec.Rep),
		mbpsOf(res.ThroughputBps), mbpsOf(res.SendBps), fmt.Sprintf("%.1f", res.TransactionsPerSec), p50, p99,
		strconv.FormatUint(res.Lost, 10), mbpsOf(rec.Ceiling), fmt.Sprintf("%.2f", rec.EmulatorCPU), strconv.FormatUint(rec.HostDrops, 10), vethOf(rec.VethRTT), errText, rec.Flag}
}

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
