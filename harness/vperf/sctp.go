package vperf

import (
	"fmt"
	"net/netip"
	"time"

	"github.com/atmlab/atmlab/emulator/sched"
	"github.com/atmlab/atmlab/emulator/vhost"
	"github.com/atmlab/atmlab/emulator/vsctp"
)

// Implementation names the SCTP stack that measures SCTP_STREAM and
// SCTP_RR in virtual time: the record's implementation.
const Implementation = "atmlab vsctp (RFC 4960 model, virtual time)"

// sctpClock runs an association's timers on the scheduler, each followed
// by its host's barrier (what it sent goes to the NIC).
type sctpClock struct {
	h *vhost.Host
	s *sched.Scheduler
}

func (c sctpClock) Now() time.Duration { return c.s.Now() }

func (c sctpClock) After(d time.Duration, f func()) vsctp.Timer {
	return c.s.After(d, func() { c.h.Do(f) })
}

// sctpPair opens the test's association: the server's end listening on
// its data port, the client's connecting to it, each over its host's IP
// protocol 132. The client's DATA waits while its host's queue holds
// UDPQueue frames, as a sender blocks on its socket buffer.
func (r *run) sctpPair() (cl, sv *vsctp.Assoc, closeAll func()) {
	s := r.t.Lab.Sched
	svPort, clPort := r.t.Lab.Port(), r.t.Lab.Port()
	clIP, svIP := r.cl.OpenIP(vsctp.ProtocolNumber), r.sv.OpenIP(vsctp.ProtocolNumber)
	var peer netip.Addr // the client, as the server first hears from it
	sp := r.t.Spec
	sv = vsctp.New(vsctp.Config{Clock: sctpClock{r.sv, s}, MTU: r.sv.MTU(), LocalPort: svPort, PeerPort: clPort,
		SendBuf: sp.RecvBuf, RecvBuf: sp.RecvBuf, Seed: uint64(svPort)<<32 | 0x5c7f,
		Output: func(b []byte) {
			if err := svIP.Send(peer, b); err != nil {
				r.fail(fmt.Errorf("server: %w", err))
			}
		}})
	cl = vsctp.New(vsctp.Config{Clock: sctpClock{r.cl, s}, MTU: r.cl.MTU(), LocalPort: clPort, PeerPort: svPort,
		SendBuf: sp.SendBuf, RecvBuf: sp.SendBuf, Seed: uint64(clPort)<<32 | 0x5c7f,
		Room: func() bool { return r.cl.Queued() < UDPQueue },
		Output: func(b []byte) {
			if err := clIP.Send(r.t.Addr, b); err != nil {
				r.res.SendErrors++
			}
		}})
	port := func(b []byte) uint16 { return uint16(b[2])<<8 | uint16(b[3]) }
	svIP.OnPacket = func(src netip.Addr, b []byte) bool {
		if len(b) < 4 || port(b) != svPort {
			return false
		}
		if !peer.IsValid() {
			peer = src
		}
		sv.Deliver(b)
		return true
	}
	clIP.OnPacket = func(_ netip.Addr, b []byte) bool {
		if len(b) < 4 || port(b) != clPort {
			return false
		}
		cl.Deliver(b)
		return true
	}
	bufs := func(n int) int { return cmpOr(n, vsctp.DefaultBuf) }
	r.res.Implementation = Implementation
	r.res.LocalSockBuf.RequestedSend, r.res.LocalSockBuf.RequestedRecv = sp.SendBuf, sp.SendBuf
	r.res.LocalSockBuf.Send, r.res.LocalSockBuf.Recv = bufs(sp.SendBuf), bufs(sp.SendBuf)
	r.res.RemoteSockBuf.RequestedSend, r.res.RemoteSockBuf.RequestedRecv = sp.RecvBuf, sp.RecvBuf
	r.res.RemoteSockBuf.Send, r.res.RemoteSockBuf.Recv = bufs(sp.RecvBuf), bufs(sp.RecvBuf)
	r.cl.OnDrain(r.cl.Waker(cl.Pump))
	sv.Listen()
	return cl, sv, func() {
		r.cl.OnDrain(nil)
		clIP.Close()
		svIP.Close()
	}
}

func cmpOr(n, def int) int {
	if n > 0 {
		return n
	}
	return def
}

// sctpStream: SCTP_STREAM sends messages from the client for the
// duration, as many as its send buffer takes, then shuts the association
// down; the server counts the messages' octets as they are delivered; the
// elapsed time ends when the shutdown is complete (every message
// acknowledged), as TCP_STREAM's ends at the server's close.
func (r *run) sctpStream() error {
	cl, sv, closeAll := r.sctpPair()
	s := r.t.Lab.Sched
	size := r.t.Spec.Message
	msg := make([]byte, size)
	sv.OnMessage = func(m []byte) {
		r.res.BytesReceived += uint64(len(m))
		r.res.MessagesReceived++
		r.count += uint64(len(m))
	}
	closing := false
	fill := func() {
		for !closing && s.Now() < r.end {
			if err := cl.Send(msg); err != nil {
				return
			}
			r.res.BytesSent += uint64(size)
			r.res.MessagesSent++
		}
		if !closing && s.Now() >= r.end {
			closing = true
			cl.Close()
		}
	}
	cl.OnWritable = fill
	cl.OnEstablished = func() {
		r.begin()
		s.At(r.end, func() { r.cl.Do(fill) })
		fill()
	}
	cl.OnClosed = func(err error) {
		closeAll()
		if err != nil {
			r.fail(err)
			return
		}
		r.finish()
	}
	r.cl.Do(cl.Connect)
	return nil
}

// sctpRR: SCTP_RR sends a request message and waits for the response
// message, one transaction at a time, for the duration (the association
// is reliable, as TCP_RR's connection).
func (r *run) sctpRR() error {
	cl, sv, closeAll := r.sctpPair()
	s := r.t.Lab.Sched
	sp := r.t.Spec
	req, resp := make([]byte, max(sp.Request, 1)), make([]byte, max(sp.Response, 1))
	sv.OnMessage = func([]byte) {
		if err := sv.Send(resp); err != nil {
			r.fail(fmt.Errorf("server send: %w", err))
		}
	}
	var t0 time.Duration
	next := func() {
		if s.Now() >= r.end {
			closeAll()
			r.finish()
			return
		}
		t0 = s.Now()
		if err := cl.Send(req); err != nil {
			r.fail(fmt.Errorf("send: %w", err))
		}
	}
	cl.OnMessage = func([]byte) {
		r.hist.Record(s.Now() - t0)
		r.res.Transactions++
		r.count++
		next()
	}
	cl.OnEstablished = func() {
		r.begin()
		next()
	}
	cl.OnClosed = func(err error) {
		if err != nil {
			r.fail(err)
		}
	}
	r.cl.Do(cl.Connect)
	return nil
}
