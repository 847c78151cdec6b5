package perf

import (
	"context"
	"math"
	"net"
	"strings"
	"testing"
	"time"
)

// startServer runs a perf server on loopback for the test.
func startServer(t *testing.T) int {
	t.Helper()
	s, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Serve(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return s.Addr().(*net.TCPAddr).Port
}

func run(t *testing.T, port int, spec Spec) Result {
	t.Helper()
	res, err := Run(context.Background(), "127.0.0.1", port, spec)
	if err != nil {
		t.Fatalf("%s: %v", spec.Test, err)
	}
	return res
}

func TestStreams(t *testing.T) {
	port := startServer(t)
	for _, test := range []string{TCPStream, TCPMaerts} {
		res := run(t, port, Spec{Test: test, Duration: 300 * time.Millisecond, Message: 8192})
		moved := max(res.BytesReceived, res.BytesSent)
		if res.ThroughputBps <= 0 || moved == 0 || res.Elapsed < 0.27 { // MAERTS: the server starts the clock at accept
			t.Errorf("%s: %+v", test, res)
		}
		// netperf's definition: what the receiver got over the elapsed time.
		if want := float64(res.BytesReceived*8) / res.Elapsed; test == TCPStream && (res.ThroughputBps < want*0.999 || res.ThroughputBps > want*1.001) {
			t.Errorf("%s: throughput %.0f, bytes received / elapsed = %.0f", test, res.ThroughputBps, want)
		}
		if res.LocalSockBuf.Send == 0 || res.RemoteSockBuf.Recv == 0 || res.CPU.Local <= 0 {
			t.Errorf("%s: socket buffers %+v %+v, CPU %+v", test, res.LocalSockBuf, res.RemoteSockBuf, res.CPU)
		}
	}
}

func TestUDPStream(t *testing.T) {
	port := startServer(t)
	res := run(t, port, Spec{Test: UDPStream, Duration: 300 * time.Millisecond, Message: 1472})
	if res.MessagesSent == 0 || res.MessagesReceived == 0 || res.SendBps < res.ThroughputBps || res.Duplicates != 0 {
		t.Fatalf("UDP_STREAM: %+v", res)
	}
	if res.MessagesReceived+res.Lost != res.MessagesSent {
		t.Errorf("received %d + lost %d != sent %d", res.MessagesReceived, res.Lost, res.MessagesSent)
	}
	// The largest IPv4 UDP payload works; one byte more is a data point.
	if big := run(t, port, Spec{Test: UDPStream, Duration: 100 * time.Millisecond, Message: MaxUDPPayload}); big.Error != "" || big.MessagesSent == 0 {
		t.Errorf("65507-byte messages: %+v", big)
	}
	// Messages shorter than the sequence header go bare, as netperf's
	// 1-byte UDP_STREAM does: counted, not sequenced.
	if tiny := run(t, port, Spec{Test: UDPStream, Duration: 100 * time.Millisecond, Message: 1}); tiny.Error != "" || tiny.MessagesReceived == 0 || tiny.ThroughputBps <= 0 {
		t.Errorf("1-byte messages: %+v", tiny)
	}
	tooBig := run(t, port, Spec{Test: UDPStream, Duration: 100 * time.Millisecond, Message: 65535})
	if !strings.Contains(tooBig.Error, "message too large") || tooBig.MessagesSent != 0 {
		t.Errorf("65535-byte messages: error %q, sent %d", tooBig.Error, tooBig.MessagesSent)
	}
}

func TestRequestResponse(t *testing.T) {
	port := startServer(t)
	for _, spec := range []Spec{
		{Test: TCPRR, Duration: 300 * time.Millisecond},
		{Test: TCPRR, Duration: 300 * time.Millisecond, Request: 128, Response: 16384, NoDelay: true},
		{Test: UDPRR, Duration: 300 * time.Millisecond, Request: 64, Response: 64},
		{Test: TCPCRR, Duration: 300 * time.Millisecond},
	} {
		res := run(t, port, spec)
		l := res.Latency
		if res.Transactions == 0 || l == nil || !(l.P50 <= l.P90 && l.P90 <= l.P99 && l.P99 <= l.Max) || l.P50 <= 0 {
			t.Errorf("%s %d,%d: %+v latency %+v", spec.Test, spec.Request, spec.Response, res, l)
		}
		if want := float64(res.Transactions) / res.Elapsed; res.TransactionsPerSec < want*0.999 || res.TransactionsPerSec > want*1.001 {
			t.Errorf("%s: %.0f transactions/s, want %.0f", spec.Test, res.TransactionsPerSec, want)
		}
		if res.CPU.LocalServiceDemand <= 0 {
			t.Errorf("%s: no service demand: %+v", spec.Test, res.CPU)
		}
	}
}

// A UDP_RR whose datagrams get lost goes on after a timeout instead of
// stalling, and counts the timeouts.
func TestUDPRRSurvivesLoss(t *testing.T) {
	// A server that answers only every other request.
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	go func() {
		buf := make([]byte, 2048)
		for i := 0; ; i++ {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if i%2 == 0 {
				pc.WriteTo(buf[:n], from)
			}
		}
	}()
	var res Result
	spec := Spec{Test: UDPRR, Duration: 600 * time.Millisecond, Request: 64, Response: 64}
	spec.Validate()
	elapsed, err := runRR(context.Background(), net.Dialer{}, pc.LocalAddr().String(), spec, &res, &meter{})
	if err != nil || res.Transactions == 0 || res.Timeouts == 0 || elapsed > time.Second {
		t.Fatalf("UDP_RR with loss: %v, %d transactions, %d timeouts in %v", err, res.Transactions, res.Timeouts, elapsed)
	}
}

func TestErrors(t *testing.T) {
	// Nothing listens on this port: a clear error, quickly.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	start := time.Now()
	_, err := Run(context.Background(), "127.0.0.1", port, Spec{Test: TCPStream, Duration: time.Second})
	if err == nil || !strings.Contains(err.Error(), "cannot reach the perf server") || time.Since(start) > ConnectTimeout {
		t.Fatalf("unreachable server: %v after %v", err, time.Since(start))
	}
	if _, err := Run(context.Background(), "127.0.0.1", port, Spec{Test: "TCP_BOGUS"}); err == nil || !strings.Contains(err.Error(), "unknown test") {
		t.Fatalf("unknown test: %v", err)
	}
}

// -i: interval reports every interval, the last one partial, adding up to
// what the test moved.
func TestIntervals(t *testing.T) {
	port := startServer(t)
	res := run(t, port, Spec{Test: TCPStream, Duration: 550 * time.Millisecond, Interval: 100 * time.Millisecond})
	tiled(t, res, 7)
	var bits float64
	carried := 0
	for i, iv := range res.Intervals {
		if iv.Bps < 0 {
			t.Fatalf("interval %d: %+v", i, iv)
		}
		if iv.Bps > 0 { // a machine that starves the test 100 ms leaves one empty
			carried++
		}
		bits += iv.Bps * (iv.End - iv.Start)
	}
	if carried < 2 {
		t.Errorf("%d of the intervals carried bits: %+v", carried, res.Intervals)
	}
	if sent := float64(res.BytesSent * 8); bits < sent*0.99 || bits > sent*1.01 {
		t.Errorf("intervals add up to %.0f bits, the test sent %.0f", bits, sent)
	}
	rr := run(t, port, Spec{Test: TCPRR, Duration: 300 * time.Millisecond, Interval: 100 * time.Millisecond})
	tiled(t, rr, 4)
	if rr.Intervals[0].TransactionsPerSec <= 0 {
		t.Fatalf("RR intervals: %+v", rr.Intervals)
	}
}

// tiled checks that a result's interval reports tile its run from the
// start: contiguous, each but the last at least an interval long (0.09 s:
// the ticks jitter), the last ending with the run, and no more than most.
// How many there are depends on the sampler's ticks: on a busy machine (CI
// runs packages side by side) a tick came over 100 ms late and the ticker
// dropped it, leaving four reports for 0.55 s, one of them 0.2 s long.
func tiled(t *testing.T, res Result, most int) {
	t.Helper()
	ivs := res.Intervals
	if len(ivs) < 2 || len(ivs) > most || ivs[0].Start != 0 {
		t.Fatalf("%d interval reports (2 to %d expected), from %v s", len(ivs), most, ivs)
	}
	for i, iv := range ivs {
		if iv.End <= iv.Start || i > 0 && iv.Start != ivs[i-1].End || i < len(ivs)-1 && iv.End-iv.Start < 0.09 {
			t.Fatalf("interval %d of %+v: empty, not contiguous, or shorter than an interval before the last", i, ivs)
		}
	}
	if end := ivs[len(ivs)-1].End; math.Abs(end-res.Elapsed) > 0.05 {
		t.Errorf("the reports end at %.3f s, the run took %.3f s", end, res.Elapsed)
	}
}

func TestMemcpy(t *testing.T) {
	r := Memcpy(1<<20, 50*time.Millisecond)
	// What it reports is what it copied over the time it took; how fast the
	// machine copies is make bench's to say (under load this read 0.43 Gbit/s).
	if r.Test != "MEMCPY" || r.BytesReceived == 0 || r.BytesReceived%(1<<20) != 0 || r.Elapsed < 0.05 {
		t.Fatalf("Memcpy = %+v", r)
	}
	if want := float64(r.BytesReceived) * 8 / r.Elapsed; math.Abs(r.ThroughputBps-want) > 1e-9*want {
		t.Errorf("Memcpy throughput %v, want bytes*8/elapsed = %v", r.ThroughputBps, want)
	}
}
