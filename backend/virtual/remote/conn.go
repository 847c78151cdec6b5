package remote

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// unixPrefix marks an address that is a Unix socket's path.
const unixPrefix = "unix:"

// Listen listens for the other parts' processes on this machine: on a
// Unix socket in a directory of its own, whose address ("unix:PATH")
// Dial understands, or on loopback TCP where there are no Unix sockets.
// A window's exchange over a Unix socket costs a few microseconds less
// each way than over loopback TCP, which runs the TCP stack twice (on
// the sender's CPU) for every message. cleanup closes it and removes the directory.
func Listen() (ln net.Listener, addr string, cleanup func(), err error) {
	dir, err := os.MkdirTemp("", "atmlab-parts-")
	if err == nil {
		path := filepath.Join(dir, "run.sock")
		if ln, err = net.Listen("unix", path); err == nil {
			return ln, unixPrefix + path, func() { ln.Close(); os.RemoveAll(dir) }, nil
		}
		os.RemoveAll(dir)
	}
	if ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
		return nil, "", nil, err
	}
	return ln, ln.Addr().String(), func() { ln.Close() }, nil
}

// Dial connects to addr: a Listen address ("unix:PATH") or host:port,
// over TCP (a part on another machine).
func Dial(addr string, timeout time.Duration) (net.Conn, error) {
	if path, ok := strings.CutPrefix(addr, unixPrefix); ok {
		return net.DialTimeout("unix", path, timeout)
	}
	return net.DialTimeout("tcp", addr, timeout)
}

// Conn is a connection to another part's process: messages of a kind
// octet, a length (4 octets, big-endian) and a body, each read within
// the timeout, or the read fails naming the part.
type Conn struct {
	Name    string // the part at the far end, for errors
	Timeout time.Duration
	c       net.Conn
	r       *bufio.Reader
	sock    *sock // nil where the connection has no descriptor to poll
	buf     []byte
	msg     []byte
	// full, if set, is called while a write waits for the far end to read
	// (the far end may be waiting to write too): it keeps what has
	// arrived.
	full func()
	// shared is the memory shared with the far end's process, if any
	// (Share, TakeShared); wrote and read count the accounts (windows)
	// written and read, over all the points the connection serves.
	shared      *Shared
	wrote, read int64
}

// Use makes s, the memory shared with the far end's process, the way
// the two parts' groups tell each other their safe times (Group).
func (c *Conn) Use(s *Shared) { c.shared = s }

// Message kinds.
const (
	KindWindow = 'W' // a Window
	KindJSON   = 'J' // a point's hello or its figures
	KindFail   = 'F' // the sender failed: the body says why
)

// MaxMessage bounds a message's body.
const MaxMessage = 256 << 20

// NewConn wraps c, the connection to part name.
func NewConn(c net.Conn, name string, timeout time.Duration) *Conn {
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	s := newSock(c)
	var r io.Reader = c
	if s != nil {
		r = s
	}
	return &Conn{Name: name, Timeout: timeout, c: c, r: bufio.NewReaderSize(r, 64<<10), sock: s}
}

// Write sends a message. While the far end does not read, it keeps
// what arrives (full), within the timeout.
func (c *Conn) Write(kind byte, body []byte) error {
	c.msg = append(c.msg[:0], kind, 0, 0, 0, 0)
	binary.BigEndian.PutUint32(c.msg[1:], uint32(len(body)))
	c.msg = append(c.msg, body...)
	var err error
	if c.sock == nil || c.full == nil {
		_, err = c.c.Write(c.msg)
	} else {
		err = c.sock.write(c.msg, c.full, c.Timeout)
	}
	if err != nil {
		return c.connErr(err)
	}
	if kind == KindWindow {
		c.wrote++
	}
	return nil
}

// keep reads what has arrived, without waiting, for the next reads.
func (c *Conn) keep() {
	if c.sock != nil {
		c.sock.keep()
	}
}

// buffered says whether a message has begun to arrive in what is read.
func (c *Conn) buffered() bool { return c.r.Buffered() >= 5 }

// TryRead returns the next message if it has begun to arrive (ok), and
// at once if it has not; its body is valid until the next read. With
// only (a kind), a message of another kind but a failure is left to a
// later read, not ok: a part's figures that follow its last window are
// not the run's to take.
func (c *Conn) TryRead(only byte) (kind byte, body []byte, ok bool, err error) {
	if c.r.Buffered() < 5 {
		var err error
		if c.sock == nil { // a read that has passed its deadline returns at once
			c.c.SetReadDeadline(time.Now())
			_, err = c.r.Peek(5)
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				return 0, nil, false, nil
			}
		} else {
			c.sock.nowait = true
			_, err = c.r.Peek(5)
			c.sock.nowait = false
			if errors.Is(err, syscall.EAGAIN) {
				return 0, nil, false, nil
			}
		}
		if err != nil {
			return 0, nil, false, c.connErr(err)
		}
	}
	if head, _ := c.r.Peek(1); only != 0 && head[0] != only && head[0] != KindFail {
		return 0, nil, false, nil
	}
	// The rest is on its way: the far end writes a message at once.
	kind, body, err = c.Read()
	return kind, body, err == nil, err
}

// Read returns the next message; its body is valid until the next Read.
// A peer that sends nothing within the timeout, or closes the
// connection, is an error naming its part; so is a failure it reports.
func (c *Conn) Read() (kind byte, body []byte, err error) {
	if c.Timeout > 0 {
		c.c.SetReadDeadline(time.Now().Add(c.Timeout))
	} else {
		c.c.SetReadDeadline(time.Time{})
	}
	var h [5]byte
	if _, err := io.ReadFull(c.r, h[:]); err != nil {
		return 0, nil, c.connErr(err)
	}
	n := binary.BigEndian.Uint32(h[1:])
	if n > MaxMessage {
		return 0, nil, fmt.Errorf("part %s sent a message of %d octets, more than %d", c.Name, n, MaxMessage)
	}
	if cap(c.buf) < int(n) {
		c.buf = make([]byte, n)
	}
	c.buf = c.buf[:n]
	if _, err := io.ReadFull(c.r, c.buf); err != nil {
		return 0, nil, c.connErr(err)
	}
	if h[0] == KindFail {
		return 0, nil, fmt.Errorf("part %s failed: %s", c.Name, c.buf)
	}
	if h[0] == KindWindow {
		c.read++
	}
	return h[0], c.buf, nil
}

// Idle is a part's process between points: it waits, as long as it
// takes, for the run's next message that is not an account, and drops
// the accounts before it (the run's part, following this one's test, may
// tell its safe time after this part's figures). ok is false once the
// run has hung up: it closed the connection, or its process ended.
func (c *Conn) Idle() (kind byte, body []byte, ok bool, err error) {
	timeout := c.Timeout
	c.Timeout = 0
	defer func() { c.Timeout = timeout }()
	for {
		kind, body, err = c.Read()
		if errors.Is(err, errHungUp) {
			return 0, nil, false, nil
		}
		if err != nil || kind != KindWindow {
			return kind, body, err == nil, err
		}
	}
}

// errHungUp is what a read or a write on a connection that the far end
// closed fails with (errors.Is).
var errHungUp = errors.New("hung up")

// hungUp is a connection's end, closed by the far part named.
type hungUp struct{ name string }

func (h hungUp) Error() string {
	return fmt.Sprintf("part %s closed its connection: its process ended", h.name)
}

func (h hungUp) Is(err error) bool { return err == errHungUp }

// connErr names the part in a read's or a write's error, and says in
// words when its process hangs or has ended (a closed connection reads
// EOF or a reset and writes a broken pipe).
func (c *Conn) connErr(err error) error {
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return fmt.Errorf("part %s sent nothing for %v: its process hangs or is gone", c.Name, c.Timeout)
	}
	if err == io.EOF || err == io.ErrUnexpectedEOF || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) {
		return hungUp{c.Name}
	}
	return fmt.Errorf("part %s: %w", c.Name, err)
}

// Close closes the connection and unmaps its shared memory.
func (c *Conn) Close() error {
	c.shared.Close()
	return c.c.Close()
}
