package labrun

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/atmlab/atmlab/harness/perf"
	"github.com/atmlab/atmlab/topologies"
)

// iperf3Tool runs a point with iperf3 -J, a one-off server per point.
type iperf3Tool struct{}

// Measure runs the point with iperf3 -J and folds its report into a
// Result: TCP from end.sum_received, UDP from the receiver's per-second
// intervals (iperf3's end-of-test UDP receiver figure divides by a window
// the control connection stretches, docs/reference.md §9).
func (iperf3Tool) Measure(ctx context.Context, r *Runner, p Point, e *topologies.Experiment) (perf.Result, error) {
	res := toolResult(r.Lab, p, e)
	if p.Test != perf.TCPStream && p.Test != perf.UDPStream {
		res.Error = "iperf3 has no " + p.Test
		return res, nil
	}
	var interval []string
	if e.Interval > 0 {
		interval = []string{"-i", strconv.FormatFloat(e.Interval.Seconds(), 'f', -1, 64)}
	}
	srv, err := r.startServer("iperf3 server", p.To, nil, append([]string{"iperf3", "-s", "-1", "-J", "-p", strconv.Itoa(iperf3Port)}, interval...)...)
	if err != nil {
		return res, err
	}
	defer srv.stop() // -1: it has served its one client; or it never had one
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
	out, res.CPU.Local, err = r.untilServed(ctx, p.From, args, func(out []byte, err error) bool {
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
