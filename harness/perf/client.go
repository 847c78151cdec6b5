package perf

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/atmlab/atmlab/emulator/hist"
)

// ConnectTimeout bounds how long a client waits for an unreachable server.
const ConnectTimeout = 5 * time.Second

// Run runs one test against the server at host:port. A data point that
// fails in a way netperf would report (a message too large for UDP) comes
// back as a Result with Error set and a nil error; a server that cannot be
// reached or goes away mid-test is an error, with what was measured so far
// in the Result.
func Run(ctx context.Context, host string, port int, spec Spec) (Result, error) {
	res := Result{Schema: SchemaVersion, Host: host}
	if err := spec.Validate(); err != nil {
		return res, err
	}
	res.Spec, res.Test = spec, spec.Test
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	d := net.Dialer{Timeout: ConnectTimeout}
	ctrl, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return res, fmt.Errorf("cannot reach the perf server at %s: %w (is `atmlab perf server` running in that host?)", addr, err)
	}
	defer ctrl.Close()
	stop := context.AfterFunc(ctx, func() { ctrl.Close() })
	defer stop()
	r := bufio.NewReader(ctrl)
	if err := json.NewEncoder(ctrl).Encode(spec); err != nil {
		return res, err
	}
	ctrl.SetReadDeadline(time.Now().Add(ConnectTimeout))
	var su setup
	if err := json.NewDecoder(r).Decode(&su); err != nil {
		return res, fmt.Errorf("perf server at %s did not answer: %w", addr, err)
	}
	if su.Error != "" {
		return res, fmt.Errorf("perf server: %s", su.Error)
	}
	ctrl.SetReadDeadline(time.Time{})
	res.RemoteSockBuf = SockBuf{RequestedSend: spec.RecvBuf, RequestedRecv: spec.RecvBuf, Send: su.SendBuf, Recv: su.RecvBuf}
	res.LocalSockBuf = SockBuf{RequestedSend: spec.SendBuf, RequestedRecv: spec.SendBuf}
	data := net.JoinHostPort(host, strconv.Itoa(su.DataPort))
	dd := net.Dialer{Timeout: ConnectTimeout, Control: sockbufControl(spec.SendBuf, spec.SendBuf)}

	cpu0 := processCPU()
	var m meter
	stopIntervals := m.sample(spec.Interval, strings.HasSuffix(spec.Test, "_RR") || spec.Test == TCPCRR)
	var elapsed time.Duration
	var runErr error
	var sent uint64
	var closeSCTP func() // an SCTP association closes after the server's report
	switch spec.Test {
	case TCPStream, TCPMaerts:
		elapsed, runErr = runTCPStream(ctx, dd, data, spec, &res, &m)
	case UDPStream:
		elapsed, sent, runErr = runUDPStream(ctx, dd, data, spec, &res, &m)
	case TCPRR, TCPCRR, UDPRR:
		elapsed, runErr = runRR(ctx, dd, data, spec, &res, &m)
	case AAL5Stream, AAL34Stream:
		elapsed, sent, runErr = runAALStream(ctx, spec, &res, &m)
	case AAL5RR, AAL34RR:
		elapsed, runErr = runAALRR(ctx, spec, &res, &m)
	case SCTPStream, SCTPRR:
		elapsed, closeSCTP, runErr = runSCTP(ctx, ctrl, su, spec, &res, &m)
	}
	res.Intervals = stopIntervals()
	cpu := processCPU() - cpu0
	if runErr == nil || res.Error != "" {
		json.NewEncoder(ctrl).Encode(done{Sent: sent})
	}
	ctrl.SetReadDeadline(time.Now().Add(10 * time.Second))
	var rep serverReport
	repErr := json.NewDecoder(r).Decode(&rep)
	if closeSCTP != nil {
		closeSCTP()
	}

	res.Elapsed = elapsed.Seconds()
	if elapsed > 0 {
		res.CPU.Local = float64(cpu) / float64(elapsed)
	}
	if rep.Elapsed > 0 {
		res.CPU.Remote = float64(rep.CPU) / float64(rep.Elapsed)
	}
	switch spec.Test {
	case TCPStream, SCTPStream:
		res.BytesReceived = rep.Bytes
	case TCPMaerts:
		res.BytesSent = rep.Bytes
	case UDPStream, AAL5Stream, AAL34Stream:
		res.MessagesReceived, res.Lost, res.Reordered, res.Duplicates = rep.Messages, rep.Lost, rep.Reordered, rep.Duplicates
		res.BytesReceived = rep.Messages * uint64(spec.Message)
		res.JitterUs = float64(rep.Jitter) / 1e3
		res.ReceiverDrops = rep.Drops
	}
	over := elapsed
	if spec.Test == UDPStream || spec.Test == AAL5Stream || spec.Test == AAL34Stream {
		res.ReceiveElapsed, over = rep.Arrival.Seconds(), max(elapsed, rep.Arrival)
	}
	if over > 0 && res.BytesReceived > 0 {
		res.ThroughputBps = float64(res.BytesReceived*8) / over.Seconds()
	}
	if (spec.Test == UDPStream || spec.Test == AAL5Stream || spec.Test == AAL34Stream) && elapsed > 0 {
		res.SendBps = float64(res.BytesSent*8) / elapsed.Seconds()
	}
	serviceDemand(&res, cpu, rep.CPU)

	switch {
	case runErr != nil:
		return res, fmt.Errorf("%s to %s: %w (partial result kept)", spec.Test, host, runErr)
	case repErr != nil:
		return res, fmt.Errorf("%s to %s: the server did not report (%v); it may have been killed (partial result kept)", spec.Test, host, repErr)
	case rep.Error != "" && res.Error == "":
		return res, fmt.Errorf("%s to %s: server: %s (partial result kept)", spec.Test, host, rep.Error)
	}
	return res, nil
}

// meter counts what a test moves (bytes, or transactions) for interval
// reports; the test loop adds, a sampler reads.
type meter struct{ n atomic.Uint64 }

// sample reports the meter every interval until stop is called, which
// returns the reports (the last one partial, as iperf3's). Only the
// sampler's goroutine records. A tick the machine delays past the next one
// is dropped (time.Ticker's rule), so that report covers both intervals:
// the reports always tile the run, however many there are.
func (m *meter) sample(interval time.Duration, rr bool) (stop func() []Interval) {
	if interval <= 0 {
		return func() []Interval { return nil }
	}
	start := time.Now()
	var out []Interval
	done := make(chan struct{})
	var last uint64
	lastAt := start
	record := func(now time.Time) {
		n := m.n.Load()
		iv := Interval{Start: lastAt.Sub(start).Seconds(), End: now.Sub(start).Seconds()}
		if d := now.Sub(lastAt).Seconds(); d > 0 {
			if rr {
				iv.TransactionsPerSec = float64(n-last) / d
			} else {
				iv.Bps = float64(n-last) * 8 / d
			}
		}
		out = append(out, iv)
		last, lastAt = n, now
	}
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case tick := <-t.C:
				// The tick's time keeps each report a whole interval, but
				// under load a ticker's times came out of order and ahead
				// of the clock (a report read 0.600-0.552 s): one outside
				// the last report and now gives way to the clock.
				now := time.Now()
				if tick.After(lastAt) && tick.Before(now) {
					now = tick
				}
				record(now)
			case <-done:
				// The last, partial interval, unless a tick just closed one.
				if now := time.Now(); now.Sub(lastAt) > interval/10 {
					record(now)
				}
				return
			}
		}
	}()
	return func() []Interval {
		close(done)
		<-exited
		return out
	}
}

// serviceDemand is netperf's: µs of CPU per KB moved, or per transaction.
func serviceDemand(res *Result, local, remote time.Duration) {
	us := func(d time.Duration) float64 { return float64(d) / 1e3 }
	if res.Transactions > 0 {
		res.CPU.LocalServiceDemand = us(local) / float64(res.Transactions)
		res.CPU.RemoteServiceDemand = us(remote) / float64(res.Transactions)
		return
	}
	if kb := float64(max(res.BytesReceived, res.BytesSent)) / 1024; kb > 0 {
		res.CPU.LocalServiceDemand = us(local) / kb
		res.CPU.RemoteServiceDemand = us(remote) / kb
	}
}

// runTCPStream sends (TCP_STREAM) or receives (TCP_MAERTS) for the test's
// duration. The elapsed time ends when the receiver has everything: for
// TCP_STREAM after shutdown, when the server closes.
func runTCPStream(ctx context.Context, dd net.Dialer, addr string, spec Spec, res *Result, m *meter) (time.Duration, error) {
	c, err := dd.DialContext(ctx, "tcp", addr)
	if err != nil {
		return 0, fmt.Errorf("data connection: %w", err)
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	tc := c.(*net.TCPConn)
	tc.SetNoDelay(spec.NoDelay)
	res.LocalSockBuf.Send, res.LocalSockBuf.Recv = sockbufs(tc)
	start := time.Now()
	c.SetDeadline(start.Add(spec.Duration + 60*time.Second))
	if spec.Test == TCPMaerts {
		buf := make([]byte, 1<<16)
		for {
			n, err := c.Read(buf)
			res.BytesReceived += uint64(n)
			m.n.Add(uint64(n))
			if err != nil {
				if errors.Is(err, io.EOF) {
					err = nil
				}
				return time.Since(start), err
			}
		}
	}
	msg := make([]byte, spec.Message)
	for end := start.Add(spec.Duration); time.Now().Before(end); {
		n, err := c.Write(msg)
		res.BytesSent += uint64(n)
		m.n.Add(uint64(n))
		if err != nil {
			return time.Since(start), err
		}
	}
	tc.CloseWrite()
	_, err = io.Copy(io.Discard, c) // the server closes once it has read everything
	return time.Since(start), err
}

// runUDPStream sends datagrams as fast as the socket takes them, each with
// a sequence number and send time.
func runUDPStream(ctx context.Context, dd net.Dialer, addr string, spec Spec, res *Result, m *meter) (time.Duration, uint64, error) {
	c, err := dd.DialContext(ctx, "udp", addr)
	if err != nil {
		return 0, 0, fmt.Errorf("data socket: %w", err)
	}
	defer c.Close()
	res.LocalSockBuf.Send, res.LocalSockBuf.Recv = sockbufs(c.(syscall.Conn))
	msg := make([]byte, spec.Message)
	var seq uint64
	start := time.Now()
	for end := start.Add(spec.Duration); time.Now().Before(end) && ctx.Err() == nil; {
		if len(msg) >= udpHeader { // shorter messages go bare, as netperf's: counted, not sequenced
			binary.BigEndian.PutUint64(msg[0:8], seq)
			binary.BigEndian.PutUint64(msg[8:16], uint64(time.Now().UnixNano()))
		}
		_, err := c.Write(msg)
		switch {
		case err == nil:
			seq++
			res.MessagesSent++
			res.BytesSent += uint64(len(msg))
			m.n.Add(uint64(len(msg)))
		case errors.Is(err, syscall.EMSGSIZE):
			res.Error = fmt.Sprintf("message too large: %d bytes (EMSGSIZE); IPv4 UDP carries at most %d", spec.Message, MaxUDPPayload)
			return time.Since(start), 0, nil
		case errors.Is(err, syscall.ENOBUFS), errors.Is(err, syscall.ECONNREFUSED):
			res.SendErrors++
		default:
			return time.Since(start), seq, err
		}
	}
	awaitFlush(ctx, c.(syscall.Conn))
	return time.Since(start), seq, nil
}

// runRR runs transactions one at a time for the test's duration.
func runRR(ctx context.Context, dd net.Dialer, addr string, spec Spec, res *Result, m *meter) (time.Duration, error) {
	req, resp := make([]byte, spec.Request), make([]byte, max(spec.Response, 1<<16))
	var h hist.Histogram
	var s rrSock
	if spec.Test != TCPCRR {
		network := "tcp"
		if spec.Test == UDPRR {
			network = "udp"
		}
		c, err := dd.DialContext(ctx, network, addr)
		if err != nil {
			return 0, fmt.Errorf("data connection: %w", err)
		}
		defer c.Close()
		if tc, ok := c.(*net.TCPConn); ok {
			tc.SetNoDelay(spec.NoDelay)
		}
		res.LocalSockBuf.Send, res.LocalSockBuf.Recv = sockbufs(c.(syscall.Conn))
		if s, err = rrSocket(c); err != nil {
			return 0, fmt.Errorf("data connection: %w", err)
		}
		defer s.Close()
	}
	timeout := 200 * time.Millisecond // UDP_RR: a lost datagram costs this, then the test goes on
	switch spec.Test {
	case TCPRR:
		s.SetTimeout(30 * time.Second)
	case UDPRR:
		s.SetTimeout(timeout)
	}
	start := time.Now()
	end := start.Add(spec.Duration)
	var seq uint64
	// Whatever ends the test, the transactions so far are the result.
	defer func() {
		res.TransactionsPerSec = float64(res.Transactions) / time.Since(start).Seconds()
		res.Latency = summarize(&h)
	}()
	// One clock reading a transaction: its end is the next one's start
	// and the test's check (a reading costs 0.2 µs here, a 1-byte
	// transaction over a veth pair 20-40 µs).
	for t0 := start; t0.Before(end) && ctx.Err() == nil; {
		switch spec.Test {
		case TCPCRR:
			cc, err := dd.DialContext(ctx, "tcp", addr)
			if err != nil {
				return time.Since(start), fmt.Errorf("connect: %w", err)
			}
			cc.SetDeadline(t0.Add(30 * time.Second))
			_, err = cc.Write(req)
			if err == nil {
				_, err = io.ReadFull(cc, resp[:spec.Response])
			}
			cc.Close()
			if err != nil {
				return time.Since(start), err
			}
		case TCPRR:
			if _, err := s.Write(req); err != nil {
				return time.Since(start), err
			}
			if _, err := io.ReadFull(s, resp[:spec.Response]); err != nil {
				return time.Since(start), err
			}
		case UDPRR:
			seq++
			if len(req) >= 8 {
				binary.BigEndian.PutUint64(req, seq)
			}
			if _, err := s.Write(req); err != nil {
				return time.Since(start), err
			}
			if !awaitResponse(s, resp, seq, spec, t0.Add(timeout)) {
				res.Timeouts++
				t0 = time.Now()
				continue
			}
		}
		now := time.Now()
		h.Record(now.Sub(t0))
		t0 = now
		res.Transactions++
		m.n.Add(1)
		if spec.Test == UDPRR && h.Count() >= 20 {
			if t := min(max(50*time.Millisecond, 8*h.Quantile(0.99)), 2*time.Second); t != timeout {
				timeout = t
				s.SetTimeout(timeout)
			}
		}
	}
	return time.Since(start), nil
}

// awaitResponse reads UDP_RR responses until the one for seq arrives or the
// deadline passes (each read is bounded by the socket's timeout, the
// deadline's distance from the request); stale responses to timed-out
// requests are skipped when the sizes leave room for the sequence number.
func awaitResponse(s rrSock, buf []byte, seq uint64, spec Spec, deadline time.Time) bool {
	for {
		n, err := s.Read(buf)
		if err != nil {
			return false
		}
		if n < 8 || spec.Request < 8 || binary.BigEndian.Uint64(buf) == seq {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
	}
}
