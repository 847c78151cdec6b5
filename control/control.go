// Package control is a running lab's control socket: the protocol's
// request and reply lines, the server that answers them for a lab and the
// client that `atmlab stats`, `capture` and `set` use, the stats schema
// and the capture fan-out. It knows nothing of namespaces or TAPs: the
// server asks a Lab, which the real-time runtime (package kernel) or a
// test's fake provides, so it builds and is tested everywhere.
package control

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/atmlab/atmlab/devices"
	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/settings"
)

// request is one line a client sends on a lab's control socket.
type request struct {
	Op       string `json:"op"` // "stats", "capture", "set" or "topology"
	Endpoint string `json:"endpoint,omitempty"`
	Cells    bool   `json:"cells,omitempty"` // capture an ATM link's cells, not its PDUs
	// set's direction (a sending endpoint, or both) and change
	Direction string           `json:"direction,omitempty"`
	Change    *settings.Change `json:"change,omitempty"`
}

// reply is the first line the server answers; a capture's pcap stream follows it.
type reply struct {
	Error string   `json:"error,omitempty"`
	Stats *Stats   `json:"stats,omitempty"`
	Set   *Changed `json:"set,omitempty"`
	// Topology answers a topology request (topology.go).
	Topology *topologies.View `json:"topology,omitempty"`
}

// Lab is what the server asks of a running lab. Query and Do run a
// function on the goroutine that owns the lab's model (the real-time
// loop): Query waits for it, Do does not.
type Lab interface {
	Name() string
	Network() *devices.Network
	Start() time.Time // the wall time of model time 0, for captures' timestamps
	Query(ctx context.Context, f func()) error
	Do(f func())
	Stats(ctx context.Context) (Stats, error)
	Set(ctx context.Context, endpoint, direction string, c settings.Change) (Changed, error)
}

// Server answers a lab's control socket.
type Server struct {
	lab   Lab
	ln    net.Listener
	path  string
	owner uint32        // the user who started the lab; root may control it too
	idle  time.Duration // how long a client may take to send its request
	wg    sync.WaitGroup

	// The connections open, and those still waiting for their request,
	// oldest first: over maxConns the oldest waiting one is dropped.
	mu       sync.Mutex
	left     *sync.Cond // a connection's handler has ended
	open     int        // connections whose handlers have not ended
	evicting int        // of them, dropped ones whose handlers are ending
	waiting  []*conn

	// captures lists each captured channel's subscribers; only the lab's
	// model goroutine touches it.
	captures map[emulator.Tapper][]chan<- captured
}

const (
	maxRequest  = 4 << 10         // bytes in one request line; a real one is under 200
	requestIdle = 5 * time.Second // to send the request line after connecting
	// maxConns bounds the connections served at once, so that a flood of
	// idle ones cannot use up the lab's file descriptors and hold answers
	// back until their idle time runs out.
	maxConns = 64
)

// conn is a client connection; evicted says it was dropped to make room.
type conn struct {
	net.Conn
	evicted bool // under Server.mu
}

// Listen binds lab's control socket at path (mode 0600); Serve answers it.
func Listen(lab Lab, path string) (*Server, error) {
	ln, err := listenUnix(path, 0o600)
	if err != nil {
		return nil, fmt.Errorf("control socket: %w", err)
	}
	return newServer(lab, ln, path), nil
}

func newServer(lab Lab, ln net.Listener, path string) *Server {
	s := &Server{lab: lab, ln: ln, path: path, owner: uint32(os.Geteuid()), idle: requestIdle,
		captures: map[emulator.Tapper][]chan<- captured{}}
	s.left = sync.NewCond(&s.mu)
	return s
}

// listenUnix binds a Unix socket at path with the given mode, whatever the
// umask: it binds under a temporary name, sets the mode, then renames the
// socket into place, so that no one ever connects to it with a looser mode.
func listenUnix(path string, mode os.FileMode) (net.Listener, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	tmp := fmt.Sprintf("%s.%d.tmp", path, os.Getpid())
	os.Remove(tmp)
	ln, err := net.Listen("unix", tmp)
	if err != nil {
		return nil, err
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false) // the socket is at path from now on
	if err = os.Chmod(tmp, mode); err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		ln.Close()
		os.Remove(tmp)
		return nil, err
	}
	return ln, nil
}

// Serve accepts connections until the listener is closed or ctx ends. An
// Accept error such as running out of file descriptors is waited out, as
// net/http does, never taken as the end.
func (s *Server) Serve(ctx context.Context) {
	var backoff time.Duration
	for {
		c, err := s.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) || ctx.Err() != nil {
				return
			}
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			select {
			case <-time.After(backoff):
			case <-ctx.Done():
				return
			}
			continue
		}
		backoff = 0
		cc, ok := s.admit(c)
		if !ok {
			json.NewEncoder(c).Encode(reply{Error: fmt.Sprintf("busy: %d connections are being served (captures or requests); try again when one ends", maxConns)})
			c.Close()
			continue
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer s.leave(cc)
			defer c.Close()
			stop := context.AfterFunc(ctx, func() { c.Close() })
			defer stop()
			s.handle(ctx, cc)
		}()
	}
}

// admit counts a new connection in. At maxConns the oldest connection still
// waiting for its request is dropped (its read ends now, with a reason);
// if none is waiting, the new one is refused. Dropped connections close as
// their handlers end; admit waits for them only beyond twice maxConns, so
// that a flood is drained at the pace of Accept and the lab never holds
// more than 2 x maxConns descriptors for clients.
func (s *Server) admit(c net.Conn) (*conn, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.open-s.evicting >= maxConns || s.open >= 2*maxConns {
		if s.open-s.evicting < maxConns {
			s.left.Wait() // for dropped ones to close
			continue
		}
		if len(s.waiting) == 0 {
			return nil, false
		}
		old := s.waiting[0]
		s.waiting = s.waiting[1:]
		old.evicted = true
		s.evicting++
		old.SetReadDeadline(time.Now())
	}
	cc := &conn{Conn: c}
	s.open++
	s.waiting = append(s.waiting, cc)
	return cc, true
}

// received takes c off the waiting list: its request has come (or failed).
func (s *Server) received(c *conn) (evicted bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i := slices.Index(s.waiting, c); i >= 0 {
		s.waiting = slices.Delete(s.waiting, i, i+1)
	}
	return c.evicted
}

// leave counts a connection out when its handler ends.
func (s *Server) leave(c *conn) {
	s.received(c)
	s.mu.Lock()
	s.open--
	if c.evicted {
		s.evicting--
	}
	s.left.Broadcast()
	s.mu.Unlock()
}

// Close stops listening and removes the socket; connections being answered
// end with Serve's ctx.
func (s *Server) Close() error {
	err := s.ln.Close()
	os.Remove(s.path)
	return err
}

// readRequest reads one request line of at most maxRequest bytes within the
// server's idle time.
func (s *Server) readRequest(c *conn) (request, error) {
	var req request
	s.mu.Lock()
	if !c.evicted { // an eviction's deadline stays
		c.SetReadDeadline(time.Now().Add(s.idle))
	}
	s.mu.Unlock()
	defer c.SetReadDeadline(time.Time{})
	line, err := bufio.NewReaderSize(io.LimitReader(c, maxRequest+1), maxRequest+1).ReadSlice('\n')
	evicted := s.received(c)
	switch {
	case evicted && errors.Is(err, os.ErrDeadlineExceeded):
		return req, fmt.Errorf("no request yet and %d connections open: closed to make room (send the request as soon as connected)", maxConns)
	case errors.Is(err, os.ErrDeadlineExceeded):
		return req, fmt.Errorf("no request within %v", s.idle)
	case len(line) > maxRequest || errors.Is(err, bufio.ErrBufferFull):
		return req, fmt.Errorf("request longer than %d bytes", maxRequest)
	case err != nil:
		return req, errors.New("request not ended by a newline")
	}
	return decodeRequest(line)
}

// decodeRequest decodes one request line. A set's change is checked
// against the lab file's ranges (settings.Settings) here, so that no
// change outside them reaches the lab, whichever Lab answers it.
func decodeRequest(line []byte) (request, error) {
	var req request
	var typeErr *json.UnmarshalTypeError
	if err := json.Unmarshal(line, &req); errors.As(err, &typeErr) && typeErr.Field != "" {
		return request{}, fmt.Errorf("request field %s: want %s", typeErr.Field, kindName(typeErr.Type))
	} else if err != nil {
		return request{}, errors.New("request is not a JSON object such as {\"op\":\"stats\"}")
	}
	if req.Op == "set" && req.Change != nil {
		if err := req.Change.Check(); err != nil {
			return request{}, err
		}
	}
	return req, nil
}

// kindName says what JSON a Go type takes, for a request's wrong field.
func kindName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "a whole number within its range"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "a string"
	}
	return "an object"
}

// handle answers one connection. Errors never repeat what the client sent.
func (s *Server) handle(ctx context.Context, c *conn) {
	fail := func(msg string) { json.NewEncoder(c).Encode(reply{Error: msg}) }
	uid, err := peerUID(c.Conn)
	if err != nil {
		fail(err.Error())
		return
	}
	if !mayControl(uid, s.owner) {
		fail(fmt.Sprintf("permission denied: only root or uid %d, who started lab %s, may use its control socket", s.owner, s.lab.Name()))
		return
	}
	req, err := s.readRequest(c)
	if err != nil {
		fail("bad request: " + err.Error())
		return
	}
	switch req.Op {
	case "stats":
		st, err := s.lab.Stats(ctx)
		if err != nil {
			fail(err.Error())
			return
		}
		json.NewEncoder(c).Encode(reply{Stats: &st})
	case "capture":
		s.capture(ctx, c, req.Endpoint, req.Cells)
	case "set":
		s.set(ctx, c, req)
	case "topology":
		s.topology(c)
	default:
		fail("unknown op: use stats, capture, set or topology")
	}
}

// set handles atmlab set.
func (s *Server) set(ctx context.Context, c net.Conn, req request) {
	if req.Change == nil {
		json.NewEncoder(c).Encode(reply{Error: "set without a change: give key=value settings or --reset"})
		return
	}
	ch, err := s.lab.Set(ctx, req.Endpoint, req.Direction, *req.Change)
	if err != nil {
		json.NewEncoder(c).Encode(reply{Error: err.Error()})
		return
	}
	json.NewEncoder(c).Encode(reply{Set: &ch})
}

// mayControl reports whether a peer with user id peer may control a lab
// that the user owner started: root, or that user.
func mayControl(peer, owner uint32) bool { return peer == 0 || peer == owner }
