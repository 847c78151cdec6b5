// Package vperf runs harness/perf's tests (netperf's TCP_STREAM, TCP_MAERTS,
// UDP_STREAM, TCP_RR, UDP_RR, TCP_CRR, SCTP_STREAM and SCTP_RR over
// emulator/vsctp's model, and the native AAL API's
// AAL5_STREAM, AAL5_RR, AAL34_STREAM, AAL34_RR) between a virtual lab's netstack
// hosts, in model time: the same definitions and the same Result as
// `atmlab perf client`, driven by the lab's scheduler instead of the wall
// clock. Applications never block: each runs from its sockets' events on
// the scheduler's goroutine (see package vhost).
package vperf

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net/netip"
	"time"

	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/transport/tcp"
	"gvisor.dev/gvisor/pkg/tcpip/transport/udp"

	"github.com/atmlab/atmlab/emulator/hist"
	"github.com/atmlab/atmlab/emulator/vhost"
	"github.com/atmlab/atmlab/harness/perf"
)

// UDPQueue is how many frames a UDP_STREAM sender lets wait in its host's
// queue before it waits for room: a blocking socket's send buffer
// (Linux's default 208 KiB holds about this many full-size datagrams).
const UDPQueue = 64

// udpHeader is the sequence number and send time at the front of a
// UDP_STREAM datagram, as the real-time tool writes them.
const udpHeader = 16

// Grace is how long past its duration a test may run (the final flush,
// a drain) before it is abandoned as stuck.
const Grace = 60 * time.Second

// Test is one run of a test between two hosts of a virtual lab.
type Test struct {
	Lab      *vhost.Lab
	From, To string
	Addr     netip.Addr // the server's address
	Spec     perf.Spec
}

// run is a test in progress.
type run struct {
	t        Test
	cl, sv   *vhost.Host
	res      perf.Result
	start    time.Duration
	end      time.Duration // when the client stops starting work
	finished bool
	abandon  time.Duration
	err      error
	// count is what interval reports count: transactions, or octets (a
	// TCP_STREAM's as the server reads them: netstack takes writes into
	// its send buffer in bursts of half of it, so octets written come in
	// lumps up to twice the link's rate an interval).
	count uint64
	hist  hist.Histogram
}

// Run runs the test from the scheduler's current time until it is over
// and returns netperf's figures, as perf.Run does in real time.
func Run(t Test) (perf.Result, error) {
	r, err := Start(t)
	if err != nil {
		return r.res, err
	}
	return r.Wait()
}

// Running is a test started and not yet waited for (a background load).
type Running = run

// Start starts the test at the scheduler's current time; Wait runs the
// scheduler until it is over.
func Start(t Test) (*Running, error) {
	verr := t.Spec.Validate()
	r := &run{t: t, cl: t.Lab.Hosts[t.From], sv: t.Lab.Hosts[t.To]}
	r.res = perf.Result{Schema: perf.SchemaVersion, Host: t.Addr.String()}
	if verr != nil {
		return r, verr
	}
	r.res.Spec, r.res.Test = t.Spec, t.Spec.Test
	if t.From == t.To {
		return r, fmt.Errorf("%s to itself: a virtual host has no loopback (run with --clock real)", t.From)
	}
	if r.cl == nil || r.sv == nil {
		return r, fmt.Errorf("%s to %s: no such virtual host", t.From, t.To)
	}
	var err error
	switch t.Spec.Test {
	case perf.TCPStream, perf.TCPMaerts:
		err = r.tcpStream()
	case perf.UDPStream:
		err = r.udpStream()
	case perf.TCPRR, perf.TCPCRR:
		err = r.tcpRR()
	case perf.UDPRR:
		err = r.udpRR()
	case perf.SCTPStream:
		err = r.sctpStream()
	case perf.SCTPRR:
		err = r.sctpRR()
	case perf.AAL5Stream, perf.AAL34Stream:
		err = r.aalStream()
	case perf.AAL5RR, perf.AAL34RR:
		err = r.aalRR()
	}
	r.abandon = t.Lab.Sched.Now() + t.Spec.Duration + Grace
	return r, err
}

// Wait runs the scheduler until the test is over and returns its result.
func (r *run) Wait() (perf.Result, error) {
	s, t := r.t.Lab.Sched, r.t
	if d := t.Lab.Drive; d != nil {
		d(func() bool { return r.finished || r.err != nil }, r.abandon)
	} else {
		for !r.finished && r.err == nil && s.Now() < r.abandon && s.Step() {
		}
	}
	switch {
	case r.err != nil:
		return r.res, fmt.Errorf("%s to %s: %w (partial result kept)", t.Spec.Test, t.Addr, r.err)
	case !r.finished:
		return r.res, fmt.Errorf("%s to %s: did not finish within %v of model time past its duration (partial result kept)", t.Spec.Test, t.Addr, Grace)
	}
	return r.res, nil
}

// begin marks the test's start and arranges its interval reports.
func (r *run) begin() {
	s := r.t.Lab.Sched
	r.start = s.Now()
	r.end = r.start + r.t.Spec.Duration
	if iv := r.t.Spec.Interval; iv > 0 {
		var last uint64
		lastAt := r.start
		var tick func()
		tick = func() {
			now := s.Now()
			n := r.count
			rec := perf.Interval{Start: (lastAt - r.start).Seconds(), End: (now - r.start).Seconds()}
			if d := (now - lastAt).Seconds(); d > 0 {
				if r.isRR() {
					rec.TransactionsPerSec = float64(n-last) / d
				} else {
					rec.Bps = float64(n-last) * 8 / d
				}
			}
			r.res.Intervals = append(r.res.Intervals, rec)
			last, lastAt = n, now
			if !r.finished && now+iv <= r.end {
				s.After(iv, tick)
			}
		}
		s.After(iv, tick)
	}
}

// mtu is the client's first interface's MTU.
func (r *run) mtu() int {
	return r.cl.MTU()
}

func (r *run) isRR() bool {
	return r.t.Spec.Test == perf.TCPRR || r.t.Spec.Test == perf.UDPRR || r.t.Spec.Test == perf.TCPCRR || r.t.Spec.Test == perf.SCTPRR ||
		r.t.Spec.Test == perf.AAL5RR || r.t.Spec.Test == perf.AAL34RR
}

// finish ends the test with its elapsed time.
func (r *run) finish() {
	if r.finished {
		return
	}
	r.finished = true
	el := r.t.Lab.Sched.Now() - r.start
	r.res.Elapsed = el.Seconds()
	if el > 0 && r.res.BytesReceived > 0 && !r.isRR() {
		r.res.ThroughputBps = float64(r.res.BytesReceived*8) / el.Seconds()
	}
	if (r.t.Spec.Test == perf.UDPStream || r.t.Spec.Test == perf.AAL5Stream || r.t.Spec.Test == perf.AAL34Stream) && el > 0 {
		r.res.SendBps = float64(r.res.BytesSent*8) / el.Seconds()
	}
	if r.isRR() {
		r.res.TransactionsPerSec = float64(r.res.Transactions) / el.Seconds()
		r.res.Latency = summarize(&r.hist)
	}
}

func (r *run) fail(err error) {
	if r.err == nil && !r.finished {
		r.err = err
	}
}

// sockbufs applies -s or -S to a socket and returns what it got.
func sockbufs(s *vhost.Socket, size int) (snd, rcv int) {
	o := s.EP.SocketOptions()
	if size > 0 {
		o.SetSendBufferSize(int64(size), true)
		o.SetReceiveBufferSize(int64(size), true)
	}
	return int(o.GetSendBufferSize()), int(o.GetReceiveBufferSize())
}

// sink reads what is there; eof reports the peer's FIN.
func sink(s *vhost.Socket) (n int, eof bool, err tcpip.Error) {
	var buf discard
	for {
		res, e := s.Read(&buf, tcpip.ReadOptions{})
		n += res.Count
		switch e.(type) {
		case nil:
			if res.Count == 0 {
				return n, false, nil
			}
		case *tcpip.ErrWouldBlock:
			return n, false, nil
		case *tcpip.ErrClosedForReceive:
			return n, true, nil
		default:
			return n, false, e
		}
	}
}

type discard struct{}

func (*discard) Write(p []byte) (int, error) { return len(p), nil }

// writer writes a message at a time, as much as the socket takes.
type writer struct {
	msg []byte
	off int
}

// write writes until the socket is full; it returns the octets written.
func (w *writer) write(s *vhost.Socket) (int, tcpip.Error) {
	total := 0
	for {
		n, err := s.EP.Write(bytes.NewReader(w.msg[w.off:]), tcpip.WriteOptions{})
		total += int(n)
		w.off = (w.off + int(n)) % len(w.msg)
		switch err.(type) {
		case nil:
		case *tcpip.ErrWouldBlock:
			return total, nil
		default:
			return total, err
		}
	}
}

func established(s *vhost.Socket) bool {
	return tcp.EndpointState(s.EP.State()) == tcp.StateEstablished
}

// listenUDP is the server's UDP socket, bound to its test port.
func (r *run) listenUDP() (*vhost.Socket, uint16, error) {
	sv, p, err := r.listen(udp.ProtocolNumber)
	if err != nil {
		return nil, 0, err
	}
	if err := sv.EP.Bind(tcpip.FullAddress{Port: p}); err != nil {
		return nil, 0, fmt.Errorf("%s: bind udp port %d: %s", r.t.To, p, err)
	}
	return sv, p, nil
}

// listen opens the server's data socket.
func (r *run) listen(proto tcpip.TransportProtocolNumber) (*vhost.Socket, uint16, error) {
	s, err := r.sv.Socket(proto)
	if err != nil {
		return nil, 0, err
	}
	p := r.t.Lab.Port()
	r.res.RemoteSockBuf.RequestedSend, r.res.RemoteSockBuf.RequestedRecv = r.t.Spec.RecvBuf, r.t.Spec.RecvBuf
	r.res.RemoteSockBuf.Send, r.res.RemoteSockBuf.Recv = sockbufs(s, r.t.Spec.RecvBuf)
	return s, p, nil
}

// dial opens the client's data socket to the server's port.
func (r *run) dial(proto tcpip.TransportProtocolNumber, p uint16) (*vhost.Socket, error) {
	c, err := r.cl.Socket(proto)
	if err != nil {
		return nil, err
	}
	r.res.LocalSockBuf.RequestedSend, r.res.LocalSockBuf.RequestedRecv = r.t.Spec.SendBuf, r.t.Spec.SendBuf
	r.res.LocalSockBuf.Send, r.res.LocalSockBuf.Recv = sockbufs(c, r.t.Spec.SendBuf)
	if proto == tcp.ProtocolNumber {
		c.EP.SocketOptions().SetDelayOption(!r.t.Spec.NoDelay)
	}
	var cerr error
	r.cl.Do(func() { cerr = c.Connect(vhost.Addr(r.t.Addr, p)) })
	return c, cerr
}

// tcpStream: TCP_STREAM writes from the client for the duration, then
// closes its side; the server reads to the end and closes; the elapsed time
// ends when the client sees that close (netperf's final flush included).
// TCP_MAERTS is the same the other way.
func (r *run) tcpStream() error {
	ln, p, err := r.listen(tcp.ProtocolNumber)
	if err != nil {
		return err
	}
	maerts := r.t.Spec.Test == perf.TCPMaerts
	msg := make([]byte, r.t.Spec.Message)
	s := r.t.Lab.Sched
	err = ln.Listen(p, func(c *vhost.Socket) {
		ln.Close()
		if r.t.Spec.RecvBuf > 0 { // accepted sockets inherit nothing from -S in netstack: set it again
			sockbufs(c, r.t.Spec.RecvBuf)
		}
		w := &writer{msg: msg}
		closed := false
		c.OnEvent = func() {
			if maerts {
				if !closed && s.Now() < r.end {
					n, err := w.write(c)
					r.res.BytesSent += uint64(n)
					if err != nil {
						r.fail(fmt.Errorf("server write: %s", err))
					}
				}
				if !closed && s.Now() >= r.end {
					closed = true
					c.EP.Shutdown(tcpip.ShutdownWrite)
				}
				if _, eof, _ := sink(c); eof {
					c.Close()
				}
				return
			}
			n, eof, err := sink(c)
			r.res.BytesReceived += uint64(n)
			r.count += uint64(n)
			if err != nil {
				r.fail(fmt.Errorf("server read: %s", err))
			}
			if eof && !closed {
				closed = true
				c.EP.Shutdown(tcpip.ShutdownWrite)
				c.Close()
			}
		}
		c.Wake()
		if maerts { // the source stops at the end even if nothing wakes it
			s.At(r.end, func() { r.sv.Do(c.Wake) })
		}
	})
	if err != nil {
		return err
	}
	c, err := r.dial(tcp.ProtocolNumber, p)
	if err != nil {
		return err
	}
	w := &writer{msg: msg}
	shut := false
	c.OnEvent = func() {
		if e := c.Err(); e != nil {
			r.fail(fmt.Errorf("data connection: %s", e))
			return
		}
		if !established(c) && r.start == 0 && !shut {
			return
		}
		if r.start == 0 && !shut {
			r.begin()
			s.At(r.end, func() { r.cl.Do(c.Wake) })
		}
		if maerts {
			n, eof, err := sink(c)
			r.res.BytesReceived += uint64(n)
			r.count += uint64(n)
			if err != nil {
				r.fail(fmt.Errorf("read: %s", err))
			}
			if eof {
				c.Close()
				r.finish()
			}
			return
		}
		if !shut && s.Now() < r.end {
			n, err := w.write(c)
			r.res.BytesSent += uint64(n)
			if err != nil {
				r.fail(fmt.Errorf("write: %s", err))
			}
		}
		if !shut && s.Now() >= r.end {
			shut = true
			c.EP.Shutdown(tcpip.ShutdownWrite)
		}
		if shut {
			if _, eof, _ := sink(c); eof {
				c.Close()
				r.finish()
			}
		}
	}
	return nil
}

// udpStream: UDP_STREAM sends datagrams for the duration, paced by its
// host's queue as a blocking socket is by its send buffer; the elapsed
// time ends when that queue is empty; the server counts what arrives
// until 300 ms pass without a datagram after the client is done.
func (r *run) udpStream() error {
	sv, p, err := r.listenUDP()
	if err != nil {
		return err
	}
	s := r.t.Lab.Sched
	var tally perf.UDPTally
	lastArrival := time.Duration(0)
	var w bytes.Buffer // one buffer for every datagram: a new one each grew from 64 bytes (6 % of a 1G flood's CPU)
	w.Grow(1 << 16)
	sv.OnEvent = func() {
		for {
			w.Reset()
			res, err := sv.Read(&w, tcpip.ReadOptions{})
			if err != nil {
				return
			}
			n := res.Count
			buf := w.Bytes()
			lastArrival = s.Now()
			if n < udpHeader {
				r.res.MessagesReceived++
				continue
			}
			seq := binary.BigEndian.Uint64(buf[0:8])
			sentAt := time.Duration(binary.BigEndian.Uint64(buf[8:16]))
			if tally.Add(seq, s.Now()-sentAt) {
				r.res.MessagesReceived++
			}
		}
	}
	c, err := r.dial(udp.ProtocolNumber, p)
	if err != nil {
		return err
	}
	size := r.t.Spec.Message
	if size > perf.MaxUDPPayload {
		r.res.Error = fmt.Sprintf("message too large: %d bytes (EMSGSIZE); IPv4 UDP carries at most %d", size, perf.MaxUDPPayload)
		r.begin()
		r.finish()
		return nil
	}
	msg := make([]byte, size)
	rd := bytes.NewReader(nil) // each datagram's, reset: one reader for all
	var seq uint64
	sending, flushing := true, false
	// The sender is paced as a blocking socket is by its send buffer: at
	// most UDPQueue of its frames written and not yet handed to the NIC
	// (waiting in the host's queue, or for ARP).
	frag := (r.mtu() - 20) &^ 7
	frames := uint64((size + 8 + frag - 1) / frag)
	base := r.cl.TxFrames
	var wrote uint64
	flushed := r.flushThenDrain(size, &tally, &lastArrival, func() { sv.Close() })
	c.OnEvent = func() {
		for sending {
			if s.Now() >= r.end {
				sending = false
				break
			}
			if wrote-(r.cl.TxFrames-base) >= UDPQueue {
				return // the drain watch brings us back
			}
			if size >= udpHeader {
				binary.BigEndian.PutUint64(msg[0:8], seq)
				binary.BigEndian.PutUint64(msg[8:16], uint64(s.Now()))
			}
			rd.Reset(msg)
			_, err := c.EP.Write(rd, tcpip.WriteOptions{})
			switch err.(type) {
			case nil:
				seq++
				wrote += frames
				r.res.MessagesSent++
				r.res.BytesSent += uint64(size)
				r.count += uint64(size)
			case *tcpip.ErrMessageTooLong:
				r.res.Error = fmt.Sprintf("message too large: %d bytes (EMSGSIZE); IPv4 UDP carries at most %d", size, perf.MaxUDPPayload)
				sending = false
			default:
				r.res.SendErrors++
				return
			}
		}
		if !sending && !flushing {
			flushing = true
			r.cl.OnDrain(nil)
			flushed()
		}
	}
	drainWatch := r.cl.Waker(c.OnEvent)
	r.cl.OnDrain(drainWatch)
	r.begin()
	s.At(r.end, func() { r.cl.Do(c.Wake) })
	r.cl.Do(c.Wake)
	return nil
}

// finishAt ends a test whose elapsed time was fixed earlier.
func (r *run) finishAt(elapsed float64) {
	r.finished = true
	r.res.Elapsed = elapsed
	if elapsed > 0 {
		r.res.ThroughputBps = float64(r.res.BytesReceived*8) / elapsed
		r.res.SendBps = float64(r.res.BytesSent*8) / elapsed
	}
}

// summarize is perf's latency summary of a histogram, in µs.
func summarize(h *hist.Histogram) *perf.LatencySummary {
	us := func(d time.Duration) float64 { return float64(d) / 1e3 }
	s := h.Summary()
	return &perf.LatencySummary{Mean: us(s.Mean), P50: us(s.P50), P90: us(s.P90), P99: us(s.P99), Max: us(s.Max)}
}

// flushThenDrain returns flushed, which ends a datagram stream's send once
// the host has sent its last frame, looking every 10 µs until it has
// (netperf's final flush; the real-time tool asks SIOCOUTQ, which a TAP's
// ring hides frames from), then counts what arrives until 300 ms pass
// without a datagram (*lastArrival, which the receiver keeps), closes
// the test's sockets and finishes with the send's elapsed time.
func (r *run) flushThenDrain(size int, tally *perf.UDPTally, lastArrival *time.Duration, closeAll func()) func() {
	s := r.t.Lab.Sched
	var flushed, drain func()
	flushed = func() {
		if !r.cl.Sent() {
			s.After(10*time.Microsecond, flushed)
			return
		}
		r.res.Elapsed = (s.Now() - r.start).Seconds()
		*lastArrival = max(*lastArrival, s.Now())
		drain()
	}
	drain = func() {
		if s.Now()-*lastArrival >= 300*time.Millisecond {
			closeAll()
			r.res.BytesReceived = r.res.MessagesReceived * uint64(size)
			if r.res.MessagesSent > r.res.MessagesReceived {
				r.res.Lost = r.res.MessagesSent - r.res.MessagesReceived
			}
			r.res.Duplicates, r.res.Reordered = tally.Duplicates, tally.Reordered
			r.res.JitterUs = tally.JitterNs() / 1e3
			el := r.res.Elapsed
			r.finished = false
			r.finishAt(el)
			return
		}
		s.At(*lastArrival+300*time.Millisecond, drain)
	}
	return flushed
}
