package vperf

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"time"

	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/transport/tcp"
	"gvisor.dev/gvisor/pkg/tcpip/transport/udp"

	"github.com/atmlab/atmlab/emulator/vhost"
)

// echo is the server side of TCP_RR and TCP_CRR on one connection: it
// reads requests and answers each with a response; for TCP_CRR it closes
// the connection once it has answered.
func (r *run) echo(c *vhost.Socket, perConn bool) {
	zeros := make([]byte, r.t.Spec.Response)
	got, owed, answered := 0, 0, 0
	closed := false
	c.OnEvent = func() {
		if closed {
			return
		}
		n, eof, err := sink(c)
		got += n
		for got >= r.t.Spec.Request {
			got -= r.t.Spec.Request
			owed += r.t.Spec.Response
			answered++
		}
		for owed > 0 && err == nil {
			var k int64
			k, err = c.EP.Write(bytes.NewReader(zeros[:min(owed, len(zeros))]), tcpip.WriteOptions{})
			owed -= int(k)
			if _, ok := err.(*tcpip.ErrWouldBlock); ok {
				err = nil
				break
			}
		}
		if err != nil || eof || perConn && answered > 0 && owed == 0 {
			closed = true
			c.Close()
		}
	}
	c.Wake()
}

// tcpRR: TCP_RR sends a request and reads the whole response, one
// transaction at a time, for the duration; TCP_CRR does each on a new
// connection (connect, request, response, close).
func (r *run) tcpRR() error {
	crr := r.t.Spec.Test == "TCP_CRR"
	ln, p, err := r.listen(tcp.ProtocolNumber)
	if err != nil {
		return err
	}
	s := r.t.Lab.Sched
	err = ln.Listen(p, func(c *vhost.Socket) {
		if r.t.Spec.RecvBuf > 0 {
			sockbufs(c, r.t.Spec.RecvBuf)
		}
		r.echo(c, crr)
	})
	if err != nil {
		return err
	}
	req := make([]byte, r.t.Spec.Request)
	var t0 time.Duration
	// transaction runs one exchange on c; next starts the following one.
	var next func()
	exchange := func(c *vhost.Socket, done func()) {
		sent, got := 0, 0
		c.OnEvent = func() {
			if e := c.Err(); e != nil {
				r.fail(fmt.Errorf("data connection: %s", e))
				return
			}
			if sent == 0 && !established(c) {
				return // still connecting
			}
			for sent < len(req) {
				k, err := c.EP.Write(bytes.NewReader(req[sent:]), tcpip.WriteOptions{})
				sent += int(k)
				if _, ok := err.(*tcpip.ErrWouldBlock); ok {
					break
				} else if err != nil {
					r.fail(fmt.Errorf("write: %s", err))
					return
				}
			}
			n, eof, err := sink(c)
			got += n
			switch {
			case err != nil:
				r.fail(fmt.Errorf("read: %s", err))
			case got >= r.t.Spec.Response:
				c.OnEvent = func() {}
				done()
			case eof:
				r.fail(fmt.Errorf("the server closed the connection"))
			}
		}
		c.Wake()
	}
	record := func() {
		r.hist.Record(s.Now() - t0)
		r.res.Transactions++
		r.count++
	}
	if crr {
		next = func() {
			if s.Now() >= r.end {
				r.finish()
				return
			}
			t0 = s.Now()
			c, err := r.dial(tcp.ProtocolNumber, p)
			if err != nil {
				r.fail(err)
				return
			}
			exchange(c, func() {
				c.Close()
				record()
				next()
			})
		}
		r.begin()
		r.cl.Do(next)
		return nil
	}
	c, err := r.dial(tcp.ProtocolNumber, p)
	if err != nil {
		return err
	}
	next = func() {
		if s.Now() >= r.end {
			c.Close()
			r.finish()
			return
		}
		t0 = s.Now()
		exchange(c, func() { record(); next() })
	}
	c.OnEvent = func() {
		if e := c.Err(); e != nil {
			r.fail(fmt.Errorf("data connection: %s", e))
			return
		}
		if established(c) {
			r.begin()
			next()
		}
	}
	return nil
}

// udpRR: UDP_RR sends a request datagram and waits for the response
// datagram; a lost one costs lossyRR's timeout, then the test goes on.
func (r *run) udpRR() error {
	sv, p, err := r.listenUDP()
	if err != nil {
		return err
	}
	resp := make([]byte, r.t.Spec.Response)
	sv.OnEvent = func() {
		for {
			var b bytes.Buffer
			res, err := sv.Read(&b, tcpip.ReadOptions{NeedRemoteAddr: true})
			if err != nil {
				return
			}
			if res.Count >= 8 && len(resp) >= 8 {
				copy(resp, b.Bytes()[:8])
			}
			to := res.RemoteAddr
			sv.EP.Write(bytes.NewReader(resp), tcpip.WriteOptions{To: &to})
		}
	}
	c, err := r.dial(udp.ProtocolNumber, p)
	if err != nil {
		return err
	}
	start, answer := r.lossyRR(func(req []byte) error {
		if _, err := c.EP.Write(bytes.NewReader(req), tcpip.WriteOptions{}); err != nil {
			return fmt.Errorf("write: %s", err)
		}
		return nil
	}, func() { c.Close(); sv.Close() })
	c.OnEvent = func() {
		for {
			var b bytes.Buffer
			if _, err := c.Read(&b, tcpip.ReadOptions{}); err != nil {
				return
			}
			answer(b.Bytes())
		}
	}
	r.begin()
	r.cl.Do(start)
	return nil
}

// lossyRR is the client side of a request/response test over datagrams
// either of which may be lost (UDP_RR, AAL5_RR): write sends a request and
// closeAll ends both sides at the test's end. It returns start, which sends
// the first request, and answer, to be given each response: a lost one
// costs a timeout (200 ms, then 8 x the p99 once 20 transactions are in,
// between 50 ms and 2 s), a late answer to a timed-out request is ignored.
func (r *run) lossyRR(write func(req []byte) error, closeAll func()) (start func(), answer func(resp []byte)) {
	s := r.t.Lab.Sched
	req := make([]byte, r.t.Spec.Request)
	var seq uint64
	var t0 time.Duration
	timeout := 200 * time.Millisecond
	var timer interface{ Stop() bool }
	var send func()
	send = func() {
		if s.Now() >= r.end {
			closeAll()
			r.finish()
			return
		}
		seq++
		if len(req) >= 8 {
			binary.BigEndian.PutUint64(req, seq)
		}
		t0 = s.Now()
		if err := write(req); err != nil {
			r.fail(err)
			return
		}
		mine := seq
		timer = s.After(timeout, func() {
			if seq == mine && !r.finished {
				r.res.Timeouts++
				r.cl.Do(send)
			}
		})
	}
	answer = func(resp []byte) {
		if len(resp) >= 8 && len(req) >= 8 && binary.BigEndian.Uint64(resp) != seq {
			return // a late answer to a timed-out request
		}
		if timer != nil {
			timer.Stop()
		}
		r.hist.Record(s.Now() - t0)
		r.res.Transactions++
		r.count++
		if r.hist.Count() >= 20 {
			timeout = min(max(50*time.Millisecond, 8*r.hist.Quantile(0.99)), 2*time.Second)
		}
		send()
	}
	return send, answer
}
