package perf

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"net"
	"slices"
	"sync/atomic"
	"syscall"
	"time"
)

// Server is `atmlab perf server`: it answers clients' requests on a control
// port, each on its own goroutine, as netserver does.
type Server struct {
	ln net.Listener
}

// Listen opens the control port (":12865" by default).
func Listen(addr string) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	return &Server{ln: ln}, nil
}

// Addr returns the control address.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Serve answers clients until ctx ends.
func (s *Server) Serve(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() { s.ln.Close() })
	defer stop()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		go func() {
			defer c.Close()
			serveOne(ctx, c)
		}()
	}
}

// serveOne runs one test for the client on ctrl.
func serveOne(ctx context.Context, ctrl net.Conn) {
	r := bufio.NewReader(ctrl)
	enc := json.NewEncoder(ctrl)
	var spec Spec
	ctrl.SetReadDeadline(time.Now().Add(10 * time.Second))
	if err := json.NewDecoder(r).Decode(&spec); err != nil {
		enc.Encode(setup{Error: "bad request: " + err.Error()})
		return
	}
	if err := spec.Validate(); err != nil {
		enc.Encode(setup{Error: err.Error()})
		return
	}
	if IsAAL(spec.Test) {
		serveAAL(ctrl, r, enc, spec)
		return
	}
	if IsSCTP(spec.Test) {
		serveSCTP(ctrl, r, enc, spec)
		return
	}
	host, _, _ := net.SplitHostPort(ctrl.LocalAddr().String())
	lc := net.ListenConfig{Control: sockbufControl(spec.RecvBuf, spec.RecvBuf)}
	udp := spec.Test == UDPStream || spec.Test == UDPRR
	var ln net.Listener
	var pc net.PacketConn
	var err error
	var port int
	if udp {
		pc, err = lc.ListenPacket(ctx, "udp", net.JoinHostPort(host, "0"))
		if err == nil {
			port = pc.LocalAddr().(*net.UDPAddr).Port
			defer pc.Close()
			stampArrivals(pc)
		}
	} else {
		ln, err = lc.Listen(ctx, "tcp", net.JoinHostPort(host, "0"))
		if err == nil {
			port = ln.Addr().(*net.TCPAddr).Port
			defer ln.Close()
		}
	}
	if err != nil {
		enc.Encode(setup{Error: "data socket: " + err.Error()})
		return
	}
	var snd, rcv int
	if udp {
		snd, rcv = sockbufs(pc.(syscall.Conn))
	} else {
		snd, rcv = sockbufs(ln.(syscall.Conn))
	}
	if err := enc.Encode(setup{DataPort: port, SendBuf: snd, RecvBuf: rcv}); err != nil {
		return
	}

	// The client's "done" (UDP and RR tests) or its going away ends a test.
	ctrl.SetReadDeadline(time.Time{})
	finished := clientDone(r)

	cpu0, t0 := processCPU(), time.Now()
	var rep serverReport
	limit := time.Now().Add(spec.Duration + 30*time.Second) // a watchdog, like netserver's PAD_TIME
	switch spec.Test {
	case TCPStream:
		rep = tcpSink(ln, limit)
	case TCPMaerts:
		rep = tcpSource(ln, limit, spec)
	case TCPRR:
		rep = tcpEcho(ln, limit, spec, false, finished)
	case TCPCRR:
		rep = tcpEcho(ln, limit, spec, true, finished)
	case UDPStream:
		rep = udpSink(pc, limit, spec.Duration/10, finished)
	case UDPRR:
		rep = udpEcho(pc, limit, spec, finished)
	}
	rep.CPU, rep.Elapsed = processCPU()-cpu0, time.Since(t0)
	enc.Encode(rep)
}

// serveAAL runs a native AAL test for the client: the server's end of the
// VC (spec.PeerVC) instead of a data port.
func serveAAL(ctrl net.Conn, r *bufio.Reader, enc *json.Encoder, spec Spec) {
	c, err := openNative(*spec.PeerVC, spec.RecvBuf)
	if err != nil {
		enc.Encode(setup{Error: err.Error()})
		return
	}
	defer c.close()
	snd, rcv := c.bufs()
	if err := enc.Encode(setup{SendBuf: snd, RecvBuf: rcv}); err != nil {
		return
	}
	ctrl.SetReadDeadline(time.Time{})
	finished := clientDone(r)
	cpu0, t0 := processCPU(), time.Now()
	limit := time.Now().Add(spec.Duration + 30*time.Second)
	var rep serverReport
	if spec.Test == AAL5Stream || spec.Test == AAL34Stream {
		c.drops() // from here on
		rep = aalSink(c, limit, spec.Duration/10, finished)
		rep.Drops = c.drops()
	} else {
		rep = aalEcho(c, limit, spec, finished)
	}
	rep.CPU, rep.Elapsed = processCPU()-cpu0, time.Since(t0)
	enc.Encode(rep)
}

// acceptOne takes a stream test's data connection, both bounded by limit.
func acceptOne(ln net.Listener, limit time.Time) (net.Conn, error) {
	ln.(*net.TCPListener).SetDeadline(limit)
	c, err := ln.Accept()
	if err == nil {
		c.SetDeadline(limit)
	}
	return c, err
}

// tcpSink reads one connection to its end, as netserver does for TCP_STREAM.
func tcpSink(ln net.Listener, limit time.Time) serverReport {
	c, err := acceptOne(ln, limit)
	if err != nil {
		return serverReport{Error: err.Error()}
	}
	defer c.Close()
	n, err := io.CopyBuffer(io.Discard, c, make([]byte, 1<<16))
	rep := serverReport{Bytes: uint64(n)}
	if err != nil {
		rep.Error = err.Error()
	}
	return rep
}

// tcpSource writes messages for the test's duration (TCP_MAERTS).
func tcpSource(ln net.Listener, limit time.Time, spec Spec) serverReport {
	c, err := acceptOne(ln, limit)
	if err != nil {
		return serverReport{Error: err.Error()}
	}
	defer c.Close()
	if spec.NoDelay {
		c.(*net.TCPConn).SetNoDelay(true)
	}
	msg := make([]byte, spec.Message)
	var rep serverReport
	for end := time.Now().Add(spec.Duration); time.Now().Before(end); {
		n, err := c.Write(msg)
		rep.Bytes += uint64(n)
		rep.Messages++
		if err != nil {
			rep.Error = err.Error()
			return rep
		}
	}
	c.(*net.TCPConn).CloseWrite()
	io.Copy(io.Discard, c) // until the client has read everything and closed
	return rep
}

// tcpEcho answers requests with responses: on one connection (TCP_RR) or
// one connection per transaction (TCP_CRR), until the client is done.
func tcpEcho(ln net.Listener, limit time.Time, spec Spec, perConn bool, finished <-chan done) serverReport {
	var rep serverReport
	var stop atomic.Bool
	go func() { <-finished; stop.Store(true); ln.Close() }()
	req, resp := make([]byte, spec.Request), make([]byte, spec.Response)
	serve := func(c net.Conn) error {
		if spec.NoDelay {
			c.(*net.TCPConn).SetNoDelay(true)
		}
		s, err := rrSocket(c)
		if err != nil {
			return err
		}
		defer s.Close()
		s.SetTimeout(time.Until(limit))
		for {
			if _, err := io.ReadFull(s, req); err != nil {
				if errors.Is(err, io.EOF) {
					return nil
				}
				return err
			}
			if _, err := s.Write(resp); err != nil {
				return err
			}
			rep.Messages++
			rep.Bytes += uint64(len(req) + len(resp))
			if perConn {
				return nil
			}
		}
	}
	ln.(*net.TCPListener).SetDeadline(limit)
	for !stop.Load() {
		c, err := ln.Accept()
		if err != nil {
			break
		}
		err = serve(c)
		c.Close()
		if err != nil && !stop.Load() && !perConn {
			rep.Error = err.Error()
		}
		if !perConn {
			break
		}
	}
	return rep
}

// stampArrivals has the kernel note each datagram's arrival at pc
// (receiveStamps), from before the client can send any.
func stampArrivals(pc net.PacketConn) {
	if raw, err := pc.(*net.UDPConn).SyscallConn(); err == nil {
		raw.Control(func(fd uintptr) { receiveStamps(int(fd)) })
	}
}

// udpSink counts datagrams until the client is done and the path has
// drained, as sink does, each at the kernel's time for its arrival when
// stampArrivals asked for it.
func udpSink(pc net.PacketConn, limit time.Time, markEvery time.Duration, finished <-chan done) serverReport {
	buf, oob := make([]byte, 1<<16), make([]byte, stampOOB)
	uc := pc.(*net.UDPConn)
	return sink(func(wait time.Duration) ([]byte, time.Time, error) {
		uc.SetReadDeadline(time.Now().Add(wait))
		n, oobn, _, _, err := uc.ReadMsgUDPAddrPort(buf, oob) // no address to allocate
		if err != nil {
			return nil, time.Time{}, err
		}
		return buf[:n], stampIn(oob[:oobn]), nil
	}, limit, markEvery, finished)
}

// sink counts the messages recv gives until the client is done and the
// path has drained: unique sequence numbers, late (reordered) ones,
// duplicates, RFC 3550 interarrival jitter from the sender's timestamps,
// and how long the messages took to arrive (arrivals, a mark each
// markEvery). recv waits at most wait for the next message and gives the
// time it arrived (zero: the sink reads the clock itself). The path has
// drained after drainWait with nothing, or as soon as every message the
// client sent has arrived (each with a sequence number, none twice: a
// path that duplicates may still carry copies).
func sink(recv func(wait time.Duration) ([]byte, time.Time, error), limit time.Time, markEvery time.Duration, finished <-chan done) serverReport {
	var rep serverReport
	var tally UDPTally
	var sent, bare uint64
	var doneAt time.Time
	arr := arrivals{every: markEvery}
	for time.Now().Before(limit) {
		if doneAt.IsZero() {
			select {
			case d, ok := <-finished:
				if ok {
					sent = d.Sent
				}
				doneAt = time.Now()
			default:
			}
		}
		if !doneAt.IsZero() && sent > 0 && rep.Messages >= sent && bare == 0 && tally.Duplicates == 0 {
			break // all arrived: nothing is left on its way
		}
		wait := 100 * time.Millisecond
		if !doneAt.IsZero() {
			wait = drainWait
		}
		msg, arrival, err := recv(wait)
		if err != nil {
			if !doneAt.IsZero() {
				break
			}
			continue
		}
		if arrival.IsZero() {
			arrival = time.Now()
		}
		if len(msg) < udpHeader { // a bare short message: counted, no sequence or jitter
			bare++
			rep.Messages++
			rep.Bytes += uint64(len(msg))
			arr.note(arrival)
			continue
		}
		seq := binary.BigEndian.Uint64(msg[0:8])
		sentAt := time.Duration(binary.BigEndian.Uint64(msg[8:16]))
		if tally.Add(seq, time.Duration(arrival.UnixNano())-sentAt) {
			rep.Messages++
			rep.Bytes += uint64(len(msg))
			arr.note(arrival)
		}
	}
	rep.Arrival = arr.elapsed()
	if sent > rep.Messages {
		rep.Lost = sent - rep.Messages
	}
	rep.Duplicates, rep.Reordered = tally.Duplicates, tally.Reordered
	rep.Jitter = time.Duration(tally.JitterNs())
	return rep
}

// arrivals times a stream's arrival at its receiver: its first and last
// message and a mark every warm-up's length after the first.
type arrivals struct {
	every       time.Duration // between marks; 0: none
	first, last time.Time
	n           int // messages noted
	next        time.Duration
	marks       []mark
}

// A mark is the first arrival at or after a multiple of arrivals.every
// from the first, and how many came before it.
type mark struct {
	at     time.Time
	before int
}

func (a *arrivals) note(at time.Time) {
	if a.n == 0 {
		a.first, a.next = at, a.every
	}
	if since := at.Sub(a.first); a.every > 0 && since >= a.next {
		a.marks = append(a.marks, mark{at, a.n})
		a.next = (since/a.every + 1) * a.every
	}
	a.n++
	a.last = at
}

// elapsed is how long the stream's messages took to arrive, at the
// median of the rates they arrived at between its marks, from the first
// mark to the last but one, scaled to all of them: a loop late with some
// frames delivers them in a burst after a slow stretch (a stream's
// first, read from the TAP at once: 30 SDUs 50 µs apart where the link
// takes 541 µs each; or a stall mid-stream, release lateness p99 24 ms in
// one quiet round of 952-octet SDUs), which would count as the link's
// at either end of a span or anywhere in it, and counts once among the
// windows here, as a rate test's median of intervals judges. A stream
// with fewer than three marks is timed from its first arrival to its
// last (k messages over k-1 gaps). 0 with fewer than two messages.
func (a *arrivals) elapsed() time.Duration {
	if len(a.marks) < 3 {
		if a.n < 2 {
			return 0
		}
		return time.Duration(float64(a.last.Sub(a.first)) / float64(a.n-1) * float64(a.n))
	}
	per := make([]float64, 0, len(a.marks)-2) // each window's time a message
	for k := 0; k+2 < len(a.marks); k++ {
		m, next := a.marks[k], a.marks[k+1]
		per = append(per, float64(next.at.Sub(m.at))/float64(next.before-m.before))
	}
	slices.Sort(per)
	mid := (per[(len(per)-1)/2] + per[len(per)/2]) / 2
	return time.Duration(mid * float64(a.n))
}

// drainWait is how long a sink waits, once the client is done, for what
// may still be on its way.
const drainWait = 300 * time.Millisecond

// udpEcho answers each request datagram with a response datagram, echoing
// the request's first 8 bytes (its sequence number) when both have room.
// After the first request it answers only that client, on a socket
// connected to it.
func udpEcho(pc net.PacketConn, limit time.Time, spec Spec, finished <-chan done) serverReport {
	var rep serverReport
	var stop atomic.Bool
	req, resp := make([]byte, 1<<16), make([]byte, spec.Response)
	answer := func(n int, reply func([]byte) (int, error)) {
		if n >= 8 && len(resp) >= 8 {
			copy(resp, req[:8])
		}
		if _, err := reply(resp); err == nil {
			rep.Messages++
			rep.Bytes += uint64(n + len(resp))
		}
	}
	go func() { <-finished; stop.Store(true); pc.SetReadDeadline(time.Now()) }()
	pc.SetReadDeadline(limit)
	n, from, err := pc.ReadFrom(req)
	if err != nil || stop.Load() {
		return rep
	}
	answer(n, func(b []byte) (int, error) { return pc.WriteTo(b, from) })
	s, err := rrPacketSocket(pc, from)
	if err != nil {
		rep.Error = err.Error()
		return rep
	}
	defer s.Close()
	go func() { <-finished; s.Interrupt() }()
	s.SetTimeout(time.Until(limit))
	for !stop.Load() {
		n, err := s.Read(req)
		if err != nil || stop.Load() {
			break
		}
		answer(n, s.Write)
	}
	return rep
}

// clientDone is the client's done message on the control connection r,
// once it arrives; closed with nothing when the connection ends first.
func clientDone(r io.Reader) <-chan done {
	finished := make(chan done, 1)
	go func() {
		var d done
		if json.NewDecoder(r).Decode(&d) == nil {
			finished <- d
		}
		close(finished)
	}()
	return finished
}
