package perf

import (
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"testing"
	"time"
)

// Every socket a request/response test can run on (the blocking one where
// the platform has it, Go's net.Conn or PacketConn elsewhere) times out,
// wakes when interrupted, and sees a TCP peer's close as the end.
func TestRRSock(t *testing.T) {
	for _, kind := range []struct {
		name string
		of   func(net.Conn) (rrSock, error)
	}{
		{"platform", rrSocket},
		{"net.Conn", func(c net.Conn) (rrSock, error) { return &netSock{c: c}, nil }},
		{"PacketConn to a peer", func(c net.Conn) (rrSock, error) { // c's peer, from a socket of its own
			pc, err := net.ListenPacket("udp", "127.0.0.1:0")
			if err != nil {
				return nil, err
			}
			t.Cleanup(func() { pc.Close() })
			return &netSock{c: peerConn{pc, c.RemoteAddr()}}, nil
		}},
	} {
		t.Run(kind.name, func(t *testing.T) {
			pc, err := net.ListenPacket("udp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer pc.Close()
			c, err := net.Dial("udp", pc.LocalAddr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			s, err := kind.of(c)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			buf := make([]byte, 64)

			// A message there and back.
			if _, err := s.Write([]byte("ping")); err != nil {
				t.Fatal(err)
			}
			n, from, err := pc.ReadFrom(buf)
			if err != nil || string(buf[:n]) != "ping" {
				t.Fatalf("server read %q, %v", buf[:n], err)
			}
			pc.WriteTo([]byte("pong"), from)
			if n, err := s.Read(buf); err != nil || string(buf[:n]) != "pong" {
				t.Fatalf("read %q, %v; want pong", buf[:n], err)
			}

			// Nothing comes: the timeout ends the read.
			s.SetTimeout(50 * time.Millisecond)
			start := time.Now()
			if _, err := s.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) || time.Since(start) < 40*time.Millisecond {
				t.Fatalf("read with nothing sent: %v after %v; want a deadline error after 50 ms", err, time.Since(start))
			}

			// Interrupt wakes a read that has no timeout.
			s.SetTimeout(0)
			woke := make(chan time.Duration)
			go func() { start := time.Now(); s.Read(buf); woke <- time.Since(start) }()
			time.Sleep(50 * time.Millisecond)
			s.Interrupt()
			select {
			case d := <-woke:
				if d < 40*time.Millisecond {
					t.Fatalf("read returned after %v, before it was interrupted", d)
				}
			case <-time.After(2 * time.Second):
				t.Fatal("Interrupt did not wake the read")
			}
		})
	}

	// TCP: the peer's close reads as the end.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err == nil {
			c.Write([]byte("x"))
			c.Close()
		}
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := rrSocket(c)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.SetTimeout(2 * time.Second)
	buf := make([]byte, 4)
	if n, err := io.ReadFull(s, buf[:1]); n != 1 || err != nil {
		t.Fatalf("read %d, %v; want the byte sent", n, err)
	}
	if _, err := s.Read(buf); err != io.EOF {
		t.Fatalf("read after the peer closed: %v, want EOF", err)
	}
}

// TestRRSockLetsTheRuntimeCollectWhileItWaits: a read on the platform's
// socket with a timeout (whose goroutine keeps its P while it waits) does
// not hold up a collection another goroutine asks for, though its timeout
// is 10 s, and still returns the message that comes after.
func TestRRSockLetsTheRuntimeCollectWhileItWaits(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	c, err := net.Dial("udp", pc.LocalAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s, err := rrSocket(c)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.SetTimeout(10 * time.Second)
	got := make(chan string, 1)
	go func() {
		buf := make([]byte, 16)
		n, err := s.Read(buf)
		if err != nil {
			got <- err.Error()
			return
		}
		got <- string(buf[:n])
	}()
	time.Sleep(50 * time.Millisecond) // waiting in Read by now
	done := make(chan struct{})
	go func() { runtime.GC(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("a collection waited for a read keeping its P")
	}
	pc.WriteTo([]byte("pong"), c.LocalAddr())
	select {
	case m := <-got:
		if m != "pong" {
			t.Fatalf("read %q; want pong", m)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the read did not return the message")
	}
}
