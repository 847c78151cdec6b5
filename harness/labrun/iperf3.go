package labrun

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/atmlab/atmlab/harness/perf"
	"github.com/atmlab/atmlab/harness/vperf"
	"github.com/atmlab/atmlab/topologies/study"
)

// Iperf3 is iperf3, as an experiment's tool: iperf3.
func (toolbox) Iperf3() Tool { return iperf3Tool{} }

// iperf3Tool runs a point with iperf3 -J, a one-off server per point.
type iperf3Tool struct{}

func (iperf3Tool) Name() string { return "iperf3" }

// UDPSizes: iperf3 refuses a UDP block shorter than its own header (16
// bytes) or longer than an IPv4 datagram carries, and the point would
// fail.
func (t iperf3Tool) UDPSizes() (lo, hi int, why string) {
	lo, hi = 16, study.MaxUDPPayload
	return lo, hi, fmt.Sprintf("%s sends UDP blocks of %d to %d bytes and refuses others", t.Name(), lo, hi)
}

// Virtual: iperf3 is a real binary on a real host; an experiment that
// says virtual: atmlab has atmlab perf's test of the same name stand in.
func (t iperf3Tool) Virtual(e *study.Experiment) (func(vperf.Test) (perf.Result, error), error) {
	return realOnly(t.Name(), e)
}

// Measure runs the point with iperf3 -J and folds its report into a
// Result (foldIperf3).
func (iperf3Tool) Real(ctx context.Context, h *HostsEnv, p Point, e *study.Experiment) (perf.Result, error) {
	res := toolResult(h.Lab, p, e)
	if p.Test != perf.TCPStream && p.Test != perf.UDPStream && p.Test != perf.SCTPStream {
		res.Error = "iperf3 has no " + p.Test
		return res, nil
	}
	if p.Test == perf.SCTPStream {
		if res.Error = noSCTP("iperf3", nil); res.Error != "" {
			return res, nil
		}
		res.Implementation = "kernel"
	}
	var interval []string
	if e.Interval > 0 {
		interval = []string{"-i", strconv.FormatFloat(e.Interval.Seconds(), 'f', -1, 64)}
	}
	win := receiverWindow(e)
	srv, err := h.startServer("iperf3 server", p.To, nil, "iperf3", "-s", "-1", "-J", "-p", strconv.Itoa(iperf3Port), "-i", strconv.FormatFloat(win.Seconds(), 'f', -1, 64))
	if err != nil {
		return res, err
	}
	defer srv.stop() // -1: it has served its one client; or it never had one
	args := []string{"iperf3", "-c", res.Host, "-p", strconv.Itoa(iperf3Port), "-J", "--get-server-output",
		"-t", strconv.Itoa(max(1, int(e.Duration.Seconds())))}
	switch p.Test {
	case perf.UDPStream:
		args = append(args, "-u", "-b", "0")
	case perf.SCTPStream:
		args = append(args, "--sctp")
	}
	if p.Size > 0 {
		args = append(args, "-l", strconv.Itoa(p.Size))
	}
	if p.SockBuf > 0 {
		args = append(args, "-w", strconv.Itoa(p.SockBuf))
	}
	args = append(args, interval...)
	var out []byte
	out, res.CPU.Local, err = h.untilServed(ctx, p.From, args, iperf3Served)
	res.CPU.Remote, res.CPU.RemoteWaited = srv.cpu()
	return foldIperf3(out, err, p.Test, e.Interval, win, res)
}

// aboveCeiling: iperf3's UDP figure is a mean of reports.
func (iperf3Tool) aboveCeiling(test string) string {
	if test == perf.UDPStream {
		return "iperf3's figure is the mean of the receiver's one-second reports, and a report reads more than the link carried when the emulator, having fallen behind (see its lateness), catches up within it"
	}
	return ""
}

// iperf3Served says whether an iperf3 client found its server listening:
// iperf3 -J reports "unable to connect" in its JSON and, in 3.12, exits
// 0 all the same, so its exit status alone cannot tell.
func iperf3Served(out []byte, _ error) bool {
	return !strings.Contains(string(out), "unable to connect")
}

// receiverWindow is the interval an iperf3 server reports at in a lab
// run: a second, or the experiment's interval if shorter. A UDP point's
// figure is the mean of those windows (foldIperf3), whatever the interval
// the experiment's plots ask for.
func receiverWindow(e *study.Experiment) time.Duration {
	if e.Interval > 0 && e.Interval < time.Second {
		return e.Interval
	}
	return time.Second
}

// foldIperf3 folds iperf3 -J's report (with --get-server-output; err is
// the client's) into res: TCP from end.sum_received; UDP from the
// receiver's full windows of win (receiverWindow), each within 10 % of
// it. Not from the end-of-test figure or a window cut short or stretched
// by the end: the receiver's last window ends when the end-of-test message
// arrives on the control connection, after the data stopped, and 200 ms
// later when the path dropped that message and TCP resent it: a 3 s point
// with one 3.2 s window read 6 % low so. The intervals
// recorded, when the experiment asks for them (interval, every), are the
// receiver's windows summed in groups of every.
func foldIperf3(out []byte, err error, test string, every, win time.Duration, res perf.Result) (perf.Result, error) {
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
					Bytes   float64 `json:"bytes"`
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
	switch test {
	case perf.TCPStream, perf.SCTPStream:
		res.ThroughputBps, res.BytesReceived = rep.End.SumReceived.Bps, uint64(rep.End.SumReceived.Bytes)
	case perf.UDPStream:
		res.SendBps = rep.End.SumSent.Bps
		var sum float64
		var n int
		for _, iv := range rep.Server.Intervals {
			if d := iv.Sum.Seconds / win.Seconds(); d > 0.9 && d < 1.1 {
				sum += iv.Sum.Bps
				n++
			}
		}
		if n > 0 {
			res.ThroughputBps = sum / float64(n)
		}
		if every > 0 { // the receiver's interval reports, as iperf3 -i prints them
			k := max(1, int(math.Round(float64(every)/float64(win))))
			ivs := rep.Server.Intervals
			for i := 0; i < len(ivs); i += k {
				g := ivs[i:min(i+k, len(ivs))]
				iv := perf.Interval{Start: g[0].Sum.Start, End: g[len(g)-1].Sum.End}
				var bytes float64
				for _, x := range g {
					bytes += x.Sum.Bytes
				}
				if iv.End > iv.Start {
					iv.Bps = 8 * bytes / (iv.End - iv.Start)
				}
				res.Intervals = append(res.Intervals, iv)
			}
		}
		res.Lost, res.MessagesReceived, res.JitterUs = rep.End.Sum.Lost, rep.End.Sum.Packets-rep.End.Sum.Lost, rep.End.Sum.Jitter*1e3
	}
	return res, nil
}
