package control

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// testServer serves a control socket in a temporary directory for a fake
// lab (fake_test.go), lab t with no network unless setup gives one.
func testServer(t *testing.T, setup func(*Server)) (*Server, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "t.sock")
	ln, err := listenUnix(path, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	s := newServer(&fakeLab{name: "t"}, ln, path)
	s.idle = 200 * time.Millisecond
	if setup != nil {
		setup(s)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go s.Serve(ctx)
	t.Cleanup(func() { cancel(); s.Close(); s.wg.Wait() })
	return s, path
}

// ask sends raw bytes and returns the first reply line.
func ask(t *testing.T, path string, raw []byte) string {
	t.Helper()
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	go c.Write(raw) // the server may answer and close before reading it all
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		t.Fatalf("no reply to %.40q: %v", raw, err)
	}
	return line
}

// The socket's mode is 0600 whatever the umask.
func TestControlSocketMode(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	_, path := testServer(t, nil)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o600 {
		t.Errorf("socket mode %v, want srw-------", fi.Mode())
	}
}

// Bad requests get a bounded answer that never repeats them; a request
// over the size limit is refused without being read whole.
func TestControlBadRequests(t *testing.T) {
	_, path := testServer(t, nil)
	secret := "SECRET" + strings.Repeat("x", 100)
	for _, tc := range []struct {
		raw  string
		want string
	}{
		{`{"op":"` + secret + `"}` + "\n", "unknown op: use stats, capture, set or topology"},
		{secret + "\n", "bad request: request is not a JSON object"},
		{`{"op":"stats","endpoint":"` + strings.Repeat(secret, 1000) + `"}` + "\n", "bad request: request longer than 4096 bytes"},
	} {
		got := ask(t, path, []byte(tc.raw))
		if !strings.Contains(got, tc.want) || strings.Contains(got, "SECRET") || len(got) > 200 {
			t.Errorf("reply to %.30q... = %q, want %q and nothing of the request", tc.raw, got, tc.want)
		}
	}
}

// A client that sends nothing is closed after the idle time, and the
// server keeps answering others meanwhile.
func TestControlIdle(t *testing.T) {
	_, path := testServer(t, nil)
	var idle []net.Conn
	for range 50 {
		c, err := net.Dial("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		idle = append(idle, c)
	}
	if got := ask(t, path, []byte(`{"op":"nop"}`+"\n")); !strings.Contains(got, "unknown op") {
		t.Errorf("with 50 idle clients: %q", got)
	}
	for _, c := range idle {
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		line, err := bufio.NewReader(c).ReadString('\n')
		if !strings.Contains(line, "no request within") {
			t.Fatalf("idle client: %q %v, want closed with \"no request within\"", line, err)
		}
		if _, err := c.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
			t.Fatalf("idle client not closed: %v", err)
		}
	}
}

// flakyListener fails its first Accepts as a listener out of file
// descriptors does.
type flakyListener struct {
	net.Listener
	fails atomic.Int32
}

func (l *flakyListener) Accept() (net.Conn, error) {
	if l.fails.Add(-1) >= 0 {
		return nil, &net.OpError{Op: "accept", Net: "unix", Err: os.NewSyscallError("accept4", syscall.EMFILE)}
	}
	return l.Listener.Accept()
}

// An Accept error is waited out, not the end of the socket.
func TestControlAcceptErrors(t *testing.T) {
	_, path := testServer(t, func(s *Server) {
		f := &flakyListener{Listener: s.ln}
		f.fails.Store(5)
		s.ln = f
	})
	if got := ask(t, path, []byte(`{"op":"nop"}`+"\n")); !strings.Contains(got, "unknown op") {
		t.Errorf("after Accept errors: %q", got)
	}
}

// Only root or the lab's owner may control it; SO_PEERCRED names the peer.
func TestMayControl(t *testing.T) {
	for _, tc := range []struct {
		peer, owner uint32
		ok          bool
	}{{0, 0, true}, {0, 1000, true}, {1000, 1000, true}, {1001, 1000, false}, {1000, 0, false}} {
		if got := mayControl(tc.peer, tc.owner); got != tc.ok {
			t.Errorf("mayControl(%d, %d) = %v", tc.peer, tc.owner, got)
		}
	}
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if _, err := peerUID(a); err == nil {
		t.Error("peerUID of a pipe: no error")
	}
	_, path := testServer(t, func(s *Server) { s.owner = uint32(os.Geteuid()) + 1 })
	got := ask(t, path, []byte(`{"op":"nop"}`+"\n"))
	if os.Geteuid() == 0 {
		if !strings.Contains(got, "unknown op") {
			t.Errorf("root refused: %q", got)
		}
	} else if !strings.Contains(got, "permission denied: only root or uid") {
		t.Errorf("another user's lab answered: %q", got)
	}
}

// A lab that never answers is reported after the reply timeout; a signal
// (ctx) ends the wait at once.
func TestDialTimeout(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mute.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // accepts, never answers
		}
	}()
	old := replyTimeout
	replyTimeout = 300 * time.Millisecond
	defer func() { replyTimeout = old }()
	start := time.Now()
	_, _, _, err = dial(context.Background(), "mute", path, request{Op: "stats"})
	if err == nil || !strings.Contains(err.Error(), "did not answer within 300ms") || time.Since(start) > 3*time.Second {
		t.Errorf("mute lab: %v after %v", err, time.Since(start))
	}
	replyTimeout = time.Hour
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start = time.Now()
	_, _, _, err = dial(ctx, "mute", path, request{Op: "stats"})
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 3*time.Second {
		t.Errorf("cancelled wait: %v after %v", err, time.Since(start))
	}
	if _, err := QueryStats(context.Background(), "../../tmp/v", path); err == nil || !strings.Contains(err.Error(), "lab name") {
		t.Errorf("stats of a path: %v", err)
	}
}

// A flood of idle connections cannot hold answers back: over maxConns the
// oldest waiting one is dropped, so the lab never holds more than that many
// and answers at once. Without the cap, 1000 idle connections use up a file
// limit of 1300 (the server's ends beside the clients') and nothing more is
// answered until their idle time runs out.
func TestControlFlood(t *testing.T) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	low := lim
	low.Cur = min(lim.Cur, 1300)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Fatal(err)
	}
	defer syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
	s, path := testServer(t, func(s *Server) { s.idle = 30 * time.Second })
	var idle []net.Conn
	defer func() {
		for _, c := range idle {
			c.Close()
		}
	}()
	for i := range 1000 {
		c, err := net.Dial("unix", path)
		if err != nil {
			t.Fatalf("idle connection %d: %v", i, err)
		}
		idle = append(idle, c)
	}
	start := time.Now()
	got := ask(t, path, []byte(`{"op":"nop"}`+"\n"))
	took := time.Since(start)
	t.Logf("answered %v after 1000 idle connections", took)
	if !strings.Contains(got, "unknown op") || took > time.Second {
		t.Errorf("with 1000 idle clients: %q after %v, want an answer within 1 s", got, took)
	}
	s.mu.Lock()
	open, live := s.open, s.open-s.evicting
	s.mu.Unlock()
	if live > maxConns || open > 2*maxConns {
		t.Errorf("%d connections served and %d open, want at most %d and %d", live, open, maxConns, 2*maxConns)
	}
	// The first idle clients were dropped with a reason; the newest still
	// wait, with their own idle time.
	idle[0].SetReadDeadline(time.Now().Add(2 * time.Second))
	if line, _ := bufio.NewReader(idle[0]).ReadString('\n'); !strings.Contains(line, "closed to make room") {
		t.Errorf("oldest idle client: %q, want dropped to make room", line)
	}
	last := idle[len(idle)-1]
	last.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if _, err := last.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("newest idle client: %v, want still open", err)
	}
}
