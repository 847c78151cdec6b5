//go:build linux

package kernel

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"

	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/emulator/atm"
	"github.com/atmlab/atmlab/emulator/ether"
	"github.com/atmlab/atmlab/netstat"
	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/wireshark"
)

// request is one line a client sends on a lab's control socket.
type request struct {
	Op       string `json:"op"` // "stats" or "capture"
	Endpoint string `json:"endpoint,omitempty"`
	Cells    bool   `json:"cells,omitempty"` // capture an ATM link's cells, not its PDUs
	// set's direction (a sending endpoint, or both) and change
	Direction string             `json:"direction,omitempty"`
	Change    *topologies.Change `json:"change,omitempty"`
}

// reply is the first line the server answers; a capture's pcap stream follows it.
type reply struct {
	Error string   `json:"error,omitempty"`
	Stats *Stats   `json:"stats,omitempty"`
	Set   *Changed `json:"set,omitempty"`
}

// Stats is a running lab's counters: `atmlab stats -o json` prints it.
type Stats struct {
	Lab      string               `json:"lab"`
	Loop     LoopStats            `json:"emulator"`
	Ports    []emulator.PortStats `json:"ports"`
	Filtered map[string]uint64    `json:"switch_filtered,omitempty"`
	Hubs     map[string]HubStats  `json:"hubs,omitempty"`
	// Hosts are each host kernel's own UDP and TCP counters: what it lost
	// or resent inside itself, beyond any emulator counter.
	Hosts map[string]netstat.Counters `json:"hosts,omitempty"`
	// Changes are atmlab set's changes, oldest first.
	Changes []Changed `json:"changes,omitempty"`
}

// HubStats is a hub's row: how busy its medium was and how much of that
// went to collisions.
type HubStats struct {
	ether.HubStats
	Utilization       float64 `json:"utilization"`        // frame bits delivered / elapsed bit times
	CollisionFraction float64 `json:"collision_fraction"` // of the elapsed time
}

// server answers a lab's control socket.
type server struct {
	k     *Lab
	ln    net.Listener
	path  string
	owner uint32        // the user who started the lab; root may control it too
	idle  time.Duration // how long a client may take to send its request
	wg    sync.WaitGroup

	// captures lists each captured channel's subscribers; only the loop
	// goroutine touches it.
	captures map[emulator.Tapper][]chan<- captured
}

const (
	maxRequest  = 4 << 10         // bytes in one request line; a real one is under 200
	requestIdle = 5 * time.Second // to send the request line after connecting
)

func listen(k *Lab) (*server, error) {
	ln, err := listenUnix(SocketPath(k.Lab.Name), 0o600)
	if err != nil {
		return nil, fmt.Errorf("control socket: %w", err)
	}
	return newServer(k, ln, SocketPath(k.Lab.Name)), nil
}

func newServer(k *Lab, ln net.Listener, path string) *server {
	return &server{k: k, ln: ln, path: path, owner: uint32(os.Geteuid()), idle: requestIdle,
		captures: map[emulator.Tapper][]chan<- captured{}}
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

// serve accepts connections until the listener is closed. An Accept error
// such as running out of file descriptors is waited out, as net/http does,
// never taken as the end.
func (s *server) serve(ctx context.Context) {
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
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer c.Close()
			stop := context.AfterFunc(ctx, func() { c.Close() })
			defer stop()
			s.handle(ctx, c)
		}()
	}
}

func (s *server) close() error {
	err := s.ln.Close()
	os.Remove(s.path)
	return err
}

// readRequest reads one request line of at most maxRequest bytes within the
// server's idle time.
func (s *server) readRequest(c net.Conn) (request, error) {
	var req request
	c.SetReadDeadline(time.Now().Add(s.idle))
	defer c.SetReadDeadline(time.Time{})
	line, err := bufio.NewReaderSize(io.LimitReader(c, maxRequest+1), maxRequest+1).ReadSlice('\n')
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		return req, fmt.Errorf("no request within %v", s.idle)
	case len(line) > maxRequest || errors.Is(err, bufio.ErrBufferFull):
		return req, fmt.Errorf("request longer than %d bytes", maxRequest)
	case err != nil:
		return req, errors.New("request not ended by a newline")
	}
	if json.Unmarshal(line, &req) != nil {
		return req, errors.New("request is not a JSON object such as {\"op\":\"stats\"}")
	}
	return req, nil
}

// handle answers one connection. Errors never repeat what the client sent.
func (s *server) handle(ctx context.Context, c net.Conn) {
	fail := func(msg string) { json.NewEncoder(c).Encode(reply{Error: msg}) }
	uid, err := peerUID(c)
	if err != nil {
		fail(err.Error())
		return
	}
	if !mayControl(uid, s.owner) {
		fail(fmt.Sprintf("permission denied: only root or uid %d, who started lab %s, may use its control socket", s.owner, s.k.Lab.Name))
		return
	}
	req, err := s.readRequest(c)
	if err != nil {
		fail("bad request: " + err.Error())
		return
	}
	switch req.Op {
	case "stats":
		st, err := s.k.Stats(ctx)
		if err != nil {
			fail(err.Error())
			return
		}
		json.NewEncoder(c).Encode(reply{Stats: &st})
	case "capture":
		s.capture(ctx, c, req.Endpoint, req.Cells)
	case "set":
		s.set(ctx, c, req)
	default:
		fail("unknown op: use stats or capture")
	}
}

// stats gathers the lab's counters; call it on the loop goroutine.
func (k *Lab) stats() Stats {
	st := Stats{Lab: k.Lab.Name, Loop: k.Loop.Stats(), Ports: k.Net.Stats(), Changes: slices.Clone(k.changes)}
	for _, h := range k.Net.Hubs {
		if st.Hubs == nil {
			st.Hubs = map[string]HubStats{}
		}
		hs := h.Stats()
		elapsed := k.Loop.Now()
		st.Hubs[h.Name] = HubStats{HubStats: hs,
			Utilization:       float64(hs.FrameBits) / (float64(h.Rate()) * elapsed.Seconds()),
			CollisionFraction: float64(hs.CollisionTime) / float64(elapsed)}
	}
	for _, sw := range k.Net.Switches {
		if st.Filtered == nil {
			st.Filtered = map[string]uint64{}
		}
		st.Filtered[sw.Name] = sw.Filtered
	}
	return st
}

// Stats returns the lab's counters from any goroutine, with what the hosts'
// kernels dropped at their TAPs (read here, off the loop goroutine).
func (k *Lab) Stats(ctx context.Context) (Stats, error) {
	var st Stats
	if err := k.Loop.Query(ctx, func() { st = k.stats() }); err != nil {
		return st, err
	}
	for i, p := range st.Ports {
		if _, ok := k.Net.Hosts[p.Port]; ok {
			node, iface, _ := strings.Cut(p.Port, ":")
			st.Ports[i].HostDrops = hostDrops(k.Lab.Namespace(node), iface)
		}
	}
	for _, n := range k.Lab.Nodes {
		if n.Kind != topologies.KindHost {
			continue
		}
		if c, err := hostCounters(k.Lab.Namespace(n.Name)); err == nil {
			if st.Hosts == nil {
				st.Hosts = map[string]netstat.Counters{}
			}
			st.Hosts[n.Name] = c
		}
	}
	return st, nil
}

// HostKernel sums the hosts' own counters.
func (st *Stats) HostKernel() netstat.Counters {
	var c netstat.Counters
	for _, h := range st.Hosts {
		c = c.Add(h)
	}
	return c
}

// HostDrops sums the frames hosts dropped at their TAPs.
func (st *Stats) HostDrops() uint64 {
	var n uint64
	for _, p := range st.Ports {
		n += p.HostDrops
	}
	return n
}

// captured is a frame seen on a captured link.
type captured struct {
	data []byte
	at   time.Duration
}

// capture streams a link's frames, both directions, as pcap until the client
// goes away. Frames are taken at their delivery time; a slow client loses
// frames from its capture, never from the lab.
func (s *server) capture(ctx context.Context, c net.Conn, endpoint string, cellMode bool) {
	link := s.k.Net.Link(endpoint)
	if link == nil {
		json.NewEncoder(c).Encode(reply{Error: "no link has this endpoint; name one end of a link, such as h1:eth0"})
		return
	}
	chans, linkType, err := link.Tappers(cellMode)
	if err != nil {
		json.NewEncoder(c).Encode(reply{Error: err.Error()})
		return
	}
	frames := make(chan captured, 8192)
	if err := s.k.Loop.Query(ctx, func() {
		for _, ch := range chans {
			s.subscribe(ch, frames)
		}
	}); err != nil {
		return
	}
	defer s.k.Loop.Do(func() {
		for _, ch := range chans {
			s.unsubscribe(ch, frames)
		}
	})
	if err := json.NewEncoder(c).Encode(reply{}); err != nil {
		return
	}
	w, err := newPacketWriter(c, pcapgo.NgInterface{Name: link.Link.A.String() + "-" + link.Link.B.String(),
		Description: link.CaptureDescription(), LinkType: layers.LinkType(linkType)})
	if err != nil {
		return
	}
	start := s.k.Loop.start
	gone := make(chan struct{})
	go func() { io.Copy(io.Discard, c); close(gone) }()
	for {
		select {
		case f := <-frames:
			ts := start.Add(f.at)
			if linkType == topologies.LinkTypeERF { // the record carries its own timestamp
				f.data = bytes.Clone(f.data)
				atm.PutERFTime(f.data, ts)
			}
			ci := gopacket.CaptureInfo{Timestamp: ts, CaptureLength: len(f.data), Length: len(f.data)}
			if w.WritePacket(ci, f.data) != nil {
				return
			}
		case <-gone:
			return
		case <-ctx.Done():
			return
		}
	}
}

// subscribe adds a capture of ch; call on the loop goroutine.
func (s *server) subscribe(ch emulator.Tapper, to chan<- captured) {
	s.captures[ch] = append(s.captures[ch], to)
	ch.SetTap(func(f *emulator.Frame, at time.Duration) {
		for _, sub := range s.captures[ch] {
			select {
			case sub <- captured{f.Data, at}:
			default: // the client is slow: its capture loses the frame, the lab does not
			}
		}
	})
}

// unsubscribe removes a capture of ch; call on the loop goroutine.
func (s *server) unsubscribe(ch emulator.Tapper, to chan<- captured) {
	subs := s.captures[ch]
	for i, sub := range subs {
		if sub == to {
			subs = append(subs[:i], subs[i+1:]...)
			break
		}
	}
	s.captures[ch] = subs
	if len(subs) == 0 {
		delete(s.captures, ch)
		ch.SetTap(nil)
	}
}

// replyTimeout bounds the wait for a lab's first reply line: a lab busy
// beyond that is reported, not waited for.
var replyTimeout = 10 * time.Second

// dial connects to a running lab and sends req. It gives up when ctx ends
// (a signal) or the lab does not answer within replyTimeout.
func dial(ctx context.Context, lab string, req request) (net.Conn, *bufio.Reader, reply, error) {
	if err := topologies.CheckLabName(lab); err != nil {
		return nil, nil, reply{}, err
	}
	return dialPath(ctx, lab, SocketPath(lab), req)
}

func dialPath(ctx context.Context, lab, path string, req request) (net.Conn, *bufio.Reader, reply, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", path)
	switch {
	case errors.Is(err, os.ErrPermission):
		return nil, nil, reply{}, fmt.Errorf("permission denied on %s: lab %s is root's (or another user's); rerun with sudo", path, lab)
	case err != nil && ctx.Err() != nil:
		return nil, nil, reply{}, ctx.Err()
	case err != nil:
		return nil, nil, reply{}, fmt.Errorf("lab %s is not running (no answer on %s): start it with `atmlab up`", lab, path)
	}
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	c.SetDeadline(time.Now().Add(replyTimeout))
	defer c.SetDeadline(time.Time{})
	// A server that refuses the peer answers before it reads the request and
	// closes: then the write fails, but the answer is there to read.
	werr := json.NewEncoder(c).Encode(req)
	r := bufio.NewReader(c)
	line, err := r.ReadBytes('\n')
	var rep reply
	switch {
	case ctx.Err() != nil:
		err = ctx.Err()
	case err != nil && werr != nil:
		err = werr
	case errors.Is(err, os.ErrDeadlineExceeded):
		err = fmt.Errorf("lab %s did not answer within %v on %s (its emulator may be overloaded; see its CPU in the next stats)", lab, replyTimeout, path)
	case err == nil:
		if err = json.Unmarshal(line, &rep); err == nil && rep.Error != "" {
			err = errors.New(rep.Error)
		}
	default:
		err = fmt.Errorf("lab %s closed %s without an answer: %w", lab, path, err)
	}
	if err != nil {
		c.Close()
		return nil, nil, rep, err
	}
	return c, r, rep, nil
}

// QueryStats asks a running lab for its counters.
func QueryStats(ctx context.Context, lab string) (*Stats, error) {
	c, _, rep, err := dial(ctx, lab, request{Op: "stats"})
	if err != nil {
		return nil, err
	}
	c.Close()
	return rep.Stats, nil
}

// Capture copies a running lab's link, named by one endpoint, to w until
// ctx ends or count frames (if count > 0) were written: pcap, or pcapng
// for an AAL3/4 link's cells, which aal34 reports (Wireshark decodes them
// with atmlab's Lua dissector). It returns the number of frames written.
func Capture(ctx context.Context, lab, endpoint string, cellMode bool, w io.Writer, count int) (n int, aal34 bool, err error) {
	c, r, _, err := dial(ctx, lab, request{Op: "capture", Endpoint: endpoint, Cells: cellMode})
	if err != nil {
		return 0, false, fmt.Errorf("capture %s: %w", endpoint, err)
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	n, desc, err := copyCapture(r, w, count, func() bool { return ctx.Err() != nil })
	return n, strings.HasPrefix(desc, wireshark.AAL34Description), err
}
