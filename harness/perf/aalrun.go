package perf

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/atmlab/atmlab/emulator/hist"
)

// sduTooLarge is the data point of an SDU larger than a native frame on the
// interface carries (the error the packet socket gives, EMSGSIZE).
func sduTooLarge(size int) string {
	return fmt.Sprintf("SDU too large: %d octets (EMSGSIZE); a native frame carries the interface's MTU less its 8-octet header", size)
}

// runAALStream sends SDUs on the client's VC as fast as its socket takes
// them, each with UDP_STREAM's sequence number and send time when it has
// room, then waits for the host's queue to empty (the final flush).
func runAALStream(ctx context.Context, spec Spec, res *Result, m *meter) (time.Duration, uint64, error) {
	c, err := openNative(*spec.VC, spec.SendBuf)
	if err != nil {
		return 0, 0, err
	}
	defer c.close()
	res.LocalSockBuf.Send, res.LocalSockBuf.Recv = c.bufs()
	msg := make([]byte, spec.Message)
	var seq uint64
	start := time.Now()
	for end := start.Add(spec.Duration); time.Now().Before(end) && ctx.Err() == nil; {
		if len(msg) >= udpHeader {
			binary.BigEndian.PutUint64(msg[0:8], seq)
			binary.BigEndian.PutUint64(msg[8:16], uint64(time.Now().UnixNano()))
		}
		err := c.send(msg)
		switch {
		case err == nil:
			seq++
			res.MessagesSent++
			res.BytesSent += uint64(len(msg))
			m.n.Add(uint64(len(msg)))
		case isMsgSize(err):
			res.Error = sduTooLarge(spec.Message)
			return time.Since(start), 0, nil
		case isNoBufs(err):
			res.SendErrors++
		default:
			return time.Since(start), seq, err
		}
	}
	c.awaitFlush(ctx)
	return time.Since(start), seq, nil
}

// runAALRR sends a request SDU and waits for the response SDU on the VC,
// one at a time; a lost one costs UDP_RR's timeout (200 ms, then 8 x the
// p99 once 20 transactions are in).
func runAALRR(ctx context.Context, spec Spec, res *Result, m *meter) (time.Duration, error) {
	c, err := openNative(*spec.VC, spec.SendBuf)
	if err != nil {
		return 0, err
	}
	defer c.close()
	res.LocalSockBuf.Send, res.LocalSockBuf.Recv = c.bufs()
	req := make([]byte, spec.Request)
	var h hist.Histogram
	timeout := 200 * time.Millisecond
	start := time.Now()
	defer func() {
		res.TransactionsPerSec = float64(res.Transactions) / time.Since(start).Seconds()
		res.Latency = summarize(&h)
	}()
	var seq uint64
	for end := start.Add(spec.Duration); time.Now().Before(end) && ctx.Err() == nil; {
		t0 := time.Now()
		seq++
		if len(req) >= 8 {
			binary.BigEndian.PutUint64(req, seq)
		}
		if err := c.send(req); err != nil {
			if isMsgSize(err) {
				res.Error = sduTooLarge(spec.Request)
				return time.Since(start), nil
			}
			return time.Since(start), err
		}
		answered := false
		for deadline := t0.Add(timeout); !answered; {
			sdu, _, err := c.recv(time.Until(deadline))
			if err != nil {
				break
			}
			answered = len(sdu) < 8 || spec.Request < 8 || binary.BigEndian.Uint64(sdu) == seq
		}
		if !answered {
			res.Timeouts++
			continue
		}
		h.Record(time.Since(t0))
		res.Transactions++
		m.n.Add(1)
		if h.Count() >= 20 {
			timeout = min(max(50*time.Millisecond, 8*h.Quantile(0.99)), 2*time.Second)
		}
	}
	return time.Since(start), nil
}

// aalSink counts the SDUs on the server's VC until the client is done and
// the path has drained, as sink does.
func aalSink(c *nativeConn, limit time.Time, markEvery time.Duration, finished <-chan done) serverReport {
	return sink(c.recv, limit, markEvery, finished)
}

// aalEcho answers each request SDU with a response SDU on the server's VC,
// echoing the request's first 8 octets when both have room.
func aalEcho(c *nativeConn, limit time.Time, spec Spec, finished <-chan done) serverReport {
	var rep serverReport
	var stop atomic.Bool
	go func() { <-finished; stop.Store(true) }()
	resp := make([]byte, spec.Response)
	for !stop.Load() && time.Now().Before(limit) {
		req, _, err := c.recv(100 * time.Millisecond)
		if err != nil {
			if !errors.Is(err, errTimeout) {
				rep.Error = err.Error()
				break
			}
			continue
		}
		if len(req) >= 8 && len(resp) >= 8 {
			copy(resp, req[:8])
		}
		if err := c.send(resp); err == nil {
			rep.Messages++
			rep.Bytes += uint64(len(req) + len(resp))
		}
	}
	return rep
}
