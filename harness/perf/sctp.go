package perf

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/atmlab/atmlab/emulator/hist"
	"github.com/atmlab/atmlab/emulator/vsctp"
)

// SCTPTests lists the SCTP tests.
var SCTPTests = []string{SCTPStream, SCTPRR}

// IsSCTP reports whether test is an SCTP test.
func IsSCTP(test string) bool { return test == SCTPStream || test == SCTPRR }

// sctpStack is an SCTP implementation the SCTP tests run over: the
// kernel's where it has SCTP (kernelSCTP), else a userspace one over raw
// IP (pionSCTP). Both ends of a test choose for themselves; the result
// names the client's, and the server's too when they differ.
type sctpStack interface {
	// Name is what the result's implementation says.
	Name() string
	// Dial opens an association from local to remote, its buffers bufs
	// octets (0: the stack's default, as Linux's, sctpDefaultBuf).
	Dial(ctx context.Context, local netip.Addr, remote netip.AddrPort, bufs int) (sctpConn, error)
	// Listen opens a server's end on local for one association from peer,
	// its buffers as Dial's.
	Listen(local, peer netip.Addr, bufs int) (sctpListener, error)
}

// sctpListener is a server's end before its association: Port is its SCTP
// port, Bufs the buffers its association will have, Accept waits for the
// client until deadline.
type sctpListener interface {
	Port() int
	Bufs() (snd, rcv int)
	Accept(deadline time.Time) (sctpConn, error)
	Close() error
}

// sctpConn is one association with one stream: each Write sends a
// message, each Read returns one (or, from the kernel, part of one).
type sctpConn interface {
	io.ReadWriteCloser
	SetReadDeadline(t time.Time) error
	// CloseWrite ends what this end sends, after everything written: the
	// kernel's SHUTDOWN, or pion's reset of the outgoing stream (RFC
	// 6525), which the peer answers by resetting its own once it has
	// read everything.
	CloseWrite() error
	// Bufs are the association's send and receive buffers.
	Bufs() (snd, rcv int)
}

// chooseSCTP is the stack a host runs SCTP over: the kernel's when
// kernelHasSCTP says it has SCTP, else the userspace one.
func chooseSCTP(kernelHasSCTP func() bool) sctpStack {
	if kernelHasSCTP() {
		return kernelSCTP{}
	}
	return pionSCTP{}
}

// sctpStackHere is this host's SCTP stack (a variable for tests).
var sctpStackHere = func() sctpStack { return chooseSCTP(kernelHasSCTP) }

// sctpDefaultBuf is an association's send and receive buffer when -s and
// -S ask for none: Linux's SCTP default (sctp_rmem's middle value, 865,500
// octets, which the kernel does not tune), the same as the model's
// (vsctp.DefaultBuf), so that the stacks' default-buffer figures compare
// one setting. The kernel's sockets keep the kernel's own default.
const sctpDefaultBuf = vsctp.DefaultBuf

// addrOf is the IP address of a control connection's end.
func addrOf(a net.Addr) netip.Addr {
	ap, err := netip.ParseAddrPort(a.String())
	if err != nil {
		return netip.Addr{}
	}
	return ap.Addr().Unmap()
}

// runSCTP runs an SCTP test over the association to the server's data
// port, between the control connection's addresses. It returns the
// association's closer, for after the server has reported: closing it
// earlier could take unread messages from the server's stream.
func runSCTP(ctx context.Context, ctrl net.Conn, su setup, spec Spec, res *Result, m *meter) (time.Duration, func(), error) {
	stack := sctpStackHere()
	res.Implementation = stack.Name()
	if su.Implementation != "" && su.Implementation != stack.Name() {
		res.Implementation = stack.Name() + " (client), " + su.Implementation + " (server)"
	}
	remote := netip.AddrPortFrom(addrOf(ctrl.RemoteAddr()), uint16(su.DataPort))
	dctx, cancel := context.WithTimeout(ctx, ConnectTimeout)
	c, err := stack.Dial(dctx, addrOf(ctrl.LocalAddr()), remote, spec.SendBuf)
	cancel()
	if err != nil {
		return 0, nil, fmt.Errorf("SCTP association (%s): %w", stack.Name(), err)
	}
	closer := func() { c.Close() }
	stop := context.AfterFunc(ctx, closer)
	defer stop()
	res.LocalSockBuf.Send, res.LocalSockBuf.Recv = c.Bufs()
	if spec.Test == SCTPStream {
		d, err := sctpStream(ctx, c, spec, res, m)
		return d, closer, err
	}
	d, err := sctpRR(c, spec, res, m)
	return d, closer, err
}

// sctpStream sends messages for the test's duration, then waits for the
// server's SCTP to have them all (the final flush, as TCP_STREAM's).
func sctpStream(ctx context.Context, c sctpConn, spec Spec, res *Result, m *meter) (time.Duration, error) {
	msg := make([]byte, spec.Message)
	start := time.Now()
	for end := start.Add(spec.Duration); time.Now().Before(end) && ctx.Err() == nil; {
		n, err := c.Write(msg)
		res.BytesSent += uint64(n)
		m.n.Add(uint64(n))
		if err != nil {
			return time.Since(start), err
		}
	}
	err := sctpFlush(c)
	return time.Since(start), err
}

// sctpFlush is a stream's final flush, as TCP_STREAM's: it ends the
// client's side and reads until the server's side ends, which it does
// when the server has read everything.
func sctpFlush(c sctpConn) error {
	if err := c.CloseWrite(); err != nil {
		return err
	}
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	_, err := io.Copy(io.Discard, c)
	return err
}

// sctpRR runs transactions one at a time: a request message, then the
// response, read whole.
func sctpRR(c sctpConn, spec Spec, res *Result, m *meter) (time.Duration, error) {
	req, resp := make([]byte, spec.Request), make([]byte, max(spec.Response, 1<<16))
	var h hist.Histogram
	start := time.Now()
	end := start.Add(spec.Duration)
	c.SetReadDeadline(end.Add(30 * time.Second))
	defer func() {
		res.TransactionsPerSec = float64(res.Transactions) / time.Since(start).Seconds()
		res.Latency = summarize(&h)
	}()
	for time.Now().Before(end) {
		t0 := time.Now()
		if _, err := c.Write(req); err != nil {
			return time.Since(start), err
		}
		for got := 0; got < spec.Response; {
			n, err := c.Read(resp)
			if err != nil {
				return time.Since(start), err
			}
			got += n
		}
		h.Record(time.Since(t0))
		res.Transactions++
		m.n.Add(1)
	}
	return time.Since(start), nil
}

// serveSCTP runs an SCTP test for the client on ctrl: an association
// from the client's address to a data port of its own.
func serveSCTP(ctrl net.Conn, r *bufio.Reader, enc *json.Encoder, spec Spec) {
	stack := sctpStackHere()
	ln, err := stack.Listen(addrOf(ctrl.LocalAddr()), addrOf(ctrl.RemoteAddr()), spec.RecvBuf)
	if err != nil {
		enc.Encode(setup{Error: fmt.Sprintf("SCTP (%s): %v", stack.Name(), err)})
		return
	}
	defer ln.Close()
	snd, rcv := ln.Bufs()
	if err := enc.Encode(setup{DataPort: ln.Port(), SendBuf: snd, RecvBuf: rcv, Implementation: stack.Name()}); err != nil {
		return
	}
	ctrl.SetReadDeadline(time.Time{})
	finished := clientDone(r)
	cpu0, t0 := processCPU(), time.Now()
	limit := time.Now().Add(spec.Duration + 30*time.Second)
	var rep serverReport
	c, err := ln.Accept(limit)
	if err != nil {
		rep.Error = "SCTP association: " + err.Error()
	} else if spec.Test == SCTPStream {
		rep = sctpSink(c, spec, limit, finished)
	} else {
		rep = sctpEcho(c, spec, limit, finished)
	}
	rep.CPU, rep.Elapsed = processCPU()-cpu0, time.Since(t0)
	enc.Encode(rep)
	if c != nil {
		// The association stays until the client is done with it: its
		// flush waits for what this end sends last.
		select {
		case <-finished:
		case <-time.After(10 * time.Second):
		}
		c.Close()
	}
}

// sctpDrain is how long the server reads on once the client is done: the
// client's flush has put everything in the server's SCTP by then, so
// this only lets the reader empty the stream.
const sctpDrain = 300 * time.Millisecond

// sctpSink reads the stream until the client ends its side, then ends
// its own (which ends the client's flush); the client's word that it is
// done and a drain end it too, should that never come.
func sctpSink(c sctpConn, spec Spec, limit time.Time, finished <-chan done) serverReport {
	var rep serverReport
	var over atomic.Bool
	c.SetReadDeadline(limit)
	go func() {
		<-finished
		over.Store(true)
		c.SetReadDeadline(time.Now().Add(sctpDrain))
	}()
	buf := make([]byte, max(spec.Message, 1<<16))
	for {
		n, err := c.Read(buf)
		rep.Bytes += uint64(n)
		if n > 0 {
			rep.Messages++
		}
		if errors.Is(err, io.EOF) {
			c.CloseWrite()
			return rep
		}
		if err != nil {
			if !over.Load() {
				rep.Error = err.Error()
			}
			return rep
		}
	}
}

// sctpEcho answers each request with a response until the client is done.
func sctpEcho(c sctpConn, spec Spec, limit time.Time, finished <-chan done) serverReport {
	var rep serverReport
	var over atomic.Bool
	c.SetReadDeadline(limit)
	go func() { <-finished; over.Store(true); c.SetReadDeadline(time.Now()) }()
	req, resp := make([]byte, max(spec.Request, 1<<16)), make([]byte, spec.Response)
	for {
		for got := 0; got < spec.Request; {
			n, err := c.Read(req)
			if err != nil {
				if !over.Load() && !errors.Is(err, io.EOF) {
					rep.Error = err.Error()
				}
				return rep
			}
			got += n
		}
		if _, err := c.Write(resp); err != nil {
			if !over.Load() {
				rep.Error = err.Error()
			}
			return rep
		}
		rep.Messages++
		rep.Bytes += uint64(spec.Request + spec.Response)
	}
}

// KernelHasSCTP reports whether this host's kernel opens SCTP sockets:
// what iperf's --sctp needs (atmlab perf falls back to pion without).
func KernelHasSCTP() bool { return kernelHasSCTP() }
