package perf

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// This file is netperf's command line as atmlab perf takes it (-l, -r,
// -I, -i) and its result as it prints one (in words, JSON or CSV).

// ParseRR reads netperf's -r REQ,RESP (one size: both).
func ParseRR(rr string) (req, resp int, err error) {
	a, b, ok := strings.Cut(rr, ",")
	if !ok {
		b = a
	}
	if req, err = strconv.Atoi(a); err == nil {
		resp, err = strconv.Atoi(b)
	}
	if err != nil {
		return 0, 0, fmt.Errorf("-r %q: write REQ,RESP in bytes, such as 1,1 or 128,16384", rr)
	}
	return req, resp, nil
}

// ParseConfidence reads netperf's -I LEVEL,WIDTH and -i MAX,MIN (here
// --iterations, since -i is iperf3's interval); either
// alone turns the mode on with netperf's defaults for the other.
func ParseConfidence(level, iter string) (Confidence, error) {
	c := Confidence{Level: 99, Width: 0.05, Min: 3, Max: 10}
	if level != "" {
		l, w, ok := strings.Cut(level, ",")
		lv, err1 := strconv.Atoi(l)
		wv, err2 := strconv.ParseFloat(w, 64)
		if !ok || err1 != nil || err2 != nil {
			return c, fmt.Errorf("-I %q: write LEVEL,WIDTH such as 99,5", level)
		}
		c.Level, c.Width = lv, wv/100
	}
	if iter != "" {
		mx, mn, ok := strings.Cut(iter, ",")
		a, err1 := strconv.Atoi(mx)
		b, err2 := strconv.Atoi(mn)
		if !ok || err1 != nil || err2 != nil {
			return c, fmt.Errorf("--iterations %q: write MAX,MIN such as 10,3", iter)
		}
		c.Max, c.Min = a, b
	}
	return c, c.Normalize()
}

// ParseLength reads netperf's -l: seconds, or a Go duration.
func ParseLength(s string) (time.Duration, error) {
	if v, err := strconv.ParseFloat(s, 64); err == nil && v > 0 {
		return time.Duration(v * float64(time.Second)), nil
	}
	if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return d, nil
	}
	return 0, fmt.Errorf("-l %q: give seconds (10) or a duration (1.5s)", s)
}

// WriteResult writes a result as format says: "json" (a stable schema,
// schema_version 1), "csv" or else in words.
func WriteResult(w io.Writer, format string, r Result) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	case "csv":
		return writeCSV(w, r)
	}
	writeText(w, r)
	return nil
}

// writeText writes a result as netperf prints one, in words.
func writeText(w io.Writer, r Result) {
	s := r.Spec
	fmt.Fprintf(w, "%s to %s, %.2f s", r.Test, r.Host, r.Elapsed)
	switch r.Test {
	case TCPStream, TCPMaerts, UDPStream, SCTPStream, AAL5Stream, AAL34Stream:
		fmt.Fprintf(w, ", %d-byte messages\n", s.Message)
	default:
		fmt.Fprintf(w, ", %d-byte requests, %d-byte responses\n", s.Request, s.Response)
	}
	if r.Implementation != "" {
		fmt.Fprintf(w, "  SCTP stack: %s\n", r.Implementation)
	}
	if r.Error != "" {
		fmt.Fprintf(w, "  data point: %s\n", r.Error)
	}
	switch r.Test {
	case UDPStream, AAL5Stream, AAL34Stream:
		fmt.Fprintf(w, "  send     %10.2f Mbit/s  %d messages, %d send errors\n", r.SendBps/1e6, r.MessagesSent, r.SendErrors)
		fmt.Fprintf(w, "  receive  %10.2f Mbit/s  %d messages, %d lost, %d reordered, %d duplicates, jitter %.1f µs\n",
			r.ThroughputBps/1e6, r.MessagesReceived, r.Lost, r.Reordered, r.Duplicates, r.JitterUs)
	case TCPStream, TCPMaerts, SCTPStream:
		fmt.Fprintf(w, "  throughput %.2f Mbit/s (%d bytes received)\n", r.ThroughputBps/1e6, r.BytesReceived)
	default:
		l := r.Latency
		fmt.Fprintf(w, "  %.1f transactions/s (%d, %d timeouts)\n", r.TransactionsPerSec, r.Transactions, r.Timeouts)
		if l != nil {
			fmt.Fprintf(w, "  latency µs: mean %.1f  p50 %.1f  p90 %.1f  p99 %.1f  max %.1f\n", l.Mean, l.P50, l.P90, l.P99, l.Max)
		}
	}
	for _, iv := range r.Intervals {
		if iv.TransactionsPerSec > 0 {
			fmt.Fprintf(w, "  [%6.2f-%6.2f s] %10.1f transactions/s\n", iv.Start, iv.End, iv.TransactionsPerSec)
		} else {
			fmt.Fprintf(w, "  [%6.2f-%6.2f s] %10.2f Mbit/s\n", iv.Start, iv.End, iv.Bps/1e6)
		}
	}
	if c := r.Confidence; c != nil {
		mark := "reached"
		if !c.Met {
			mark = "!!! NOT reached"
		}
		fmt.Fprintf(w, "  confidence %d%% within %.1f%%: %s after %d iterations; achieved width %.2f%% (±%.2f%%); figure is their mean\n",
			c.Level, 100*c.Width, mark, c.Iterations, 100*c.Achieved, 50*c.Achieved)
	}
	fmt.Fprintf(w, "  socket buffers: local %d/%d, remote %d/%d (send/recv, as Linux set them)\n",
		r.LocalSockBuf.Send, r.LocalSockBuf.Recv, r.RemoteSockBuf.Send, r.RemoteSockBuf.Recv)
	fmt.Fprintf(w, "  CPU: local %.0f%%, remote %.0f%% of a core; service demand %.3f / %.3f µs per %s\n",
		100*r.CPU.Local, 100*r.CPU.Remote, r.CPU.LocalServiceDemand, r.CPU.RemoteServiceDemand, map[bool]string{true: "transaction", false: "KB"}[r.Transactions > 0])
}

// writeCSV writes a header and one row, for spreadsheets.
func writeCSV(out io.Writer, r Result) error {
	w := csv.NewWriter(out)
	w.Write([]string{"test", "host", "elapsed_s", "throughput_bps", "send_bps", "transactions_per_sec",
		"latency_p50_us", "latency_p90_us", "latency_p99_us", "latency_max_us", "lost", "local_cpu", "remote_cpu", "error"})
	var lat [4]string
	if l := r.Latency; l != nil {
		lat = [4]string{f(l.P50), f(l.P90), f(l.P99), f(l.Max)}
	}
	w.Write([]string{r.Test, r.Host, f(r.Elapsed), f(r.ThroughputBps), f(r.SendBps), f(r.TransactionsPerSec),
		lat[0], lat[1], lat[2], lat[3], strconv.FormatUint(r.Lost, 10), f(r.CPU.Local), f(r.CPU.Remote), r.Error})
	w.Flush()
	return w.Error()
}

func f(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// ClientFlags are atmlab perf client's flags, as given.
type ClientFlags struct {
	Host, Test, Length, RR        string
	ConfLevel, ConfIter           string // -I and --iterations
	VC, PeerVC                    string
	Interval                      time.Duration
	Port, Message, SndBuf, RcvBuf int
	NoDelay                       bool
}

// BadFlags is a mistake in perf client's flags: the caller's (a usage
// error on the command line).
type BadFlags struct{ error }

func (BadFlags) BadInput()       {}
func (e BadFlags) Unwrap() error { return e.error }

// Run runs the test the flags give, with confidence intervals when -I or
// --iterations ask for them, and writes its result to w as format says
// (table, json or csv).
func (f ClientFlags) Run(ctx context.Context, w io.Writer, format string) error {
	spec, err := f.spec()
	if err != nil {
		return BadFlags{err}
	}
	var res Result
	if f.ConfLevel != "" || f.ConfIter != "" {
		c, cerr := ParseConfidence(f.ConfLevel, f.ConfIter)
		if cerr != nil {
			return BadFlags{cerr}
		}
		res, err = RunConfident(ctx, f.Host, f.Port, spec, c)
	} else {
		res, err = Run(ctx, f.Host, f.Port, spec)
	}
	if res.Spec.Test != "" {
		if werr := WriteResult(w, format, res); err == nil {
			err = werr
		}
	}
	return err
}

// spec is the test the flags describe, checked.
func (f ClientFlags) spec() (Spec, error) {
	if f.Host == "" {
		return Spec{}, fmt.Errorf("perf client: -H HOST is required")
	}
	d, err := ParseLength(f.Length)
	if err != nil {
		return Spec{}, err
	}
	spec := Spec{Test: f.Test, Duration: d, Message: f.Message, SendBuf: f.SndBuf, RecvBuf: f.RcvBuf, NoDelay: f.NoDelay, Interval: f.Interval}
	if f.RR != "" {
		if spec.Request, spec.Response, err = ParseRR(f.RR); err != nil {
			return Spec{}, err
		}
	}
	if err := spec.SetVCs(f.VC, f.PeerVC); err != nil {
		return Spec{}, err
	}
	return spec, spec.Validate()
}
