package labrun

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/atmlab/atmlab/harness/perf"
	"github.com/atmlab/atmlab/harness/vperf"
	"github.com/atmlab/atmlab/topologies/study"
)

// iperf2Tool runs a TCP_STREAM point, or SCTP_STREAM's (--sctp), with
// iperf 2 (-y C, CSV reports), a server per point. The figure is the server's: the bytes it received
// over its interval; the client's, what it wrote, stands in if the server
// printed none.
type iperf2Tool struct{}

// Iperf is iperf 2, as an experiment's tool: iperf.
func (toolbox) Iperf() Tool { return iperf2Tool{} }

func (iperf2Tool) Name() string { return "iperf" }

// Virtual: as iperf3's, a real binary on a real host.
func (t iperf2Tool) Virtual(e *study.Experiment) (func(vperf.Test) (perf.Result, error), error) {
	return realOnly(t.Name(), e)
}

// reportWait is how long iperf 2's server may take, once its client is
// done, to print its report: it prints when the connection closes.
const reportWait = 2 * time.Second

func (iperf2Tool) Real(ctx context.Context, h *HostsEnv, p Point, e *study.Experiment) (perf.Result, error) {
	res := toolResult(h.Lab, p, e)
	var sctp []string
	switch p.Test {
	case perf.TCPStream:
	case perf.SCTPStream:
		if res.Error = noSCTP("iperf", iperf2HasSCTP); res.Error != "" {
			return res, nil
		}
		sctp, res.Implementation = []string{"--sctp"}, "kernel"
	default:
		res.Error = "the iperf (2) driver runs TCP_STREAM and SCTP_STREAM only"
		return res, nil
	}
	port := strconv.Itoa(iperf2Port)
	srv, err := h.startServer("iperf server", p.To, func(line string) bool { _, _, _, ok := iperf2CSV(line); return ok },
		append([]string{"iperf", "-s", "-p", port, "-y", "C"}, sctp...)...)
	if err != nil {
		return res, err
	}
	defer srv.stop()
	args := append([]string{"iperf", "-c", res.Host, "-p", port, "-y", "C", "-t", strconv.Itoa(max(1, int(e.Duration.Seconds())))}, sctp...)
	if p.Size > 0 {
		args = append(args, "-l", strconv.Itoa(p.Size))
	}
	if p.SockBuf > 0 {
		args = append(args, "-w", strconv.Itoa(p.SockBuf))
	}
	var out []byte
	out, res.CPU.Local, err = h.untilServed(ctx, p.From, args, func(out []byte, err error) bool { return err == nil && len(out) > 0 })
	res.CPU.Remote, res.CPU.RemoteWaited = srv.cpu()
	if err != nil {
		return res, fmt.Errorf("iperf: %v: %s", err, stderrOf(err))
	}
	texts := []string{string(out)}
	if srv.await(reportWait) == nil { // else the client's figure stands in
		texts = append([]string{srv.said.String()}, texts...)
	}
	for _, text := range texts {
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
