package cut

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/atmlab/atmlab/control"
	"github.com/atmlab/atmlab/devices"
	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/emulator/hist"
	"github.com/atmlab/atmlab/emulator/sched"
	"github.com/atmlab/atmlab/topologies"
)

// Loop is what the cut ports need of the real-time loop: calls run on its
// goroutine (where the models live), and its model clock, which any
// goroutine may read.
type Loop interface {
	Do(f func())
	Now() time.Duration
}

// Config is where a part's instance listens and where its peers are.
type Config struct {
	Listen string            // host:port of this instance's UDP socket
	Peers  map[string]string // each other part's host:port, by part name
	// Wait is how long Start waits for every peer to answer (they may
	// start later); 0 is DefaultWait.
	Wait time.Duration
	Log  io.Writer // what Start is waiting for; nil: nothing said
}

// DefaultWait is Config.Wait unless given: long enough for a batch
// system to start every part.
const DefaultWait = 2 * time.Minute

// Exchanges is how many clock exchanges Start takes with each peer
// before it checks the cuts, ExchangeGap apart; then one every PingEvery
// all through the run.
const (
	Exchanges   = 32
	ExchangeGap = 2 * time.Millisecond
	PingEvery   = 100 * time.Millisecond
)

// Cuts is a part's cut ports and the socket they share.
type Cuts struct {
	part  *Part
	loop  Loop
	s     *sched.Scheduler
	conn  *net.UDPConn
	tag   uint32
	peers map[string]*peer
	byID  map[uint32]*peer
	id    uint32 // this part's PartID
	ends  []*end
	in    map[uint32]*end // by link index and inbound direction (key)

	mu       sync.Mutex
	inbox    []arrival
	draining bool
	spare    []arrival

	buf    []byte // the loop goroutine's datagram
	nextID uint64
	done   chan struct{}
	wg     sync.WaitGroup
	strays atomic.Uint64 // datagrams from no peer, from an address no pong came from, or not decodable

	readerDone chan struct{} // closed when the reader goroutine has ended
	handedOver atomic.Bool   // the loop reads the socket (handOver)
	raw        syscall.RawConn
	rbuf       []byte // the loop goroutine's read buffer
}

// peer is another part's instance.
type peer struct {
	name string
	id   uint32         // PartID(name)
	spec string         // host:port as given
	addr netip.AddrPort // invalid until the host resolves; set before Start returns
	// from is where its pongs come from, which is where its frames come
	// from (its one socket sends both); a frame from anywhere else is a
	// stray. Read and written only in handle, which runs on one
	// goroutine at a time (the reader's, then the loop's).
	from   netip.AddrPort
	offset atomic.Int64 // its model clock minus ours, as estimated

	mu      sync.Mutex
	clock   Clock
	answers int   // pongs read
	tagErr  error // it answered for another lab
	seq     uint32
}

// end is a cut port at work.
type end struct {
	*End
	peer    *peer
	port    emulator.Port // the local end's port
	outSeq  uint32
	timer   *sched.Timer
	queue   []release
	lastAt  time.Duration
	nextSeq uint32
	// counters, on the loop goroutine
	sent, received, lost, late, limitDrops, sendErrs uint64
	lateness, slack                                  hist.Histogram
	sendLate                                         hist.Histogram // how long after departure each frame was sent
}

// arrival is a frame read from the socket, waiting for the loop.
type arrival struct {
	e         *end
	seq       uint32
	departure time.Duration // on the peer's clock
	at        time.Duration // read, on ours
	data      []byte
}

// release is a frame waiting for its model time.
type release struct {
	at   time.Duration
	data []byte
}

func key(link uint16, bToA bool) uint32 {
	k := uint32(link) << 1
	if bToA {
		k |= 1
	}
	return k
}

// PartID is a part's id in clock exchanges: FNV-1a of its name.
func PartID(part string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(part))
	return h.Sum32()
}

// Tag is a lab's tag in clock exchanges: instances of different labs (or
// of different versions of one lab's links) do not talk.
func Tag(lab *topologies.Lab) uint32 {
	h := fnv.New32a()
	h.Write([]byte(lab.Name))
	for _, l := range lab.Links {
		fmt.Fprintf(h, "/%s-%s", l.A, l.B)
	}
	return h.Sum32()
}

// Attach makes part's cut ports in network (built from part.Lab on the
// loop's scheduler s), before the loop runs: each stand-in's port sends
// what reaches it to the peer, and frames from the peer are handed to the
// local end's port at departure + delay. tag is the whole lab's (Tag).
// It opens the socket and starts reading it; Close undoes it all.
func Attach(part *Part, network *devices.Network, s *sched.Scheduler, loop Loop, tag uint32, cfg Config) (*Cuts, error) {
	c := &Cuts{part: part, loop: loop, s: s, tag: tag, peers: map[string]*peer{}, byID: map[uint32]*peer{}, id: PartID(part.Name), in: map[uint32]*end{}, done: make(chan struct{})}
	for name, a := range cfg.Peers {
		if _, port, err := net.SplitHostPort(a); err != nil || port == "" {
			return nil, fmt.Errorf("--cut-peer %s=%s: want HOST:PORT", name, a)
		}
		p := &peer{name: name, id: PartID(name), spec: a}
		p.addr, _ = resolve(a) // else Start looks it up again: a pod's name may come late
		c.peers[name] = p
		c.byID[p.id] = p
	}
	ports := map[string]emulator.Port{}
	for _, p := range network.Ports {
		ports[p.PortName()] = p
	}
	for _, e := range part.Cuts {
		p := c.peers[e.Peer]
		if p == nil {
			return nil, fmt.Errorf("cut %s: no address for part %s: give it with --cut-peer %s=HOST:PORT", e.Name(), e.Peer, e.Peer)
		}
		x := &end{End: e, peer: p, port: ports[e.Local.String()]}
		standIn := network.Hosts[e.Remote.String()]
		if x.port == nil || standIn == nil {
			return nil, fmt.Errorf("cut %s: its ports were not built (a programming fault)", e.Name())
		}
		x.timer = s.NewTimer(func() { c.release(x) })
		standIn.Sink = func(f *emulator.Frame) { c.send(x, f) }
		c.ends = append(c.ends, x)
		c.in[key(uint16(e.Index), e.LocalIsA)] = x // inbound: B to A when we are A
	}
	for name := range c.peers {
		if !c.names(name) {
			return nil, fmt.Errorf("--cut-peer %s: part %s has no cut link to part %s", name, part.Name, name)
		}
	}
	la, err := resolve(cfg.Listen)
	if err != nil {
		return nil, fmt.Errorf("--cut-listen %s: %w", cfg.Listen, err)
	}
	c.conn, err = net.ListenUDP("udp", net.UDPAddrFromAddrPort(la))
	if err != nil {
		return nil, fmt.Errorf("--cut-listen %s: %w", cfg.Listen, err)
	}
	c.conn.SetReadBuffer(4 << 20) // a burst at line rate while the reader is off its core
	c.conn.SetWriteBuffer(4 << 20)
	c.readerDone = make(chan struct{})
	go c.read()
	return c, nil
}

// names says whether some cut goes to part name.
func (c *Cuts) names(name string) bool {
	for _, e := range c.ends {
		if e.Peer == name {
			return true
		}
	}
	return false
}

// resolve reads host:port (a name is looked up once).
func resolve(a string) (netip.AddrPort, error) {
	ua, err := net.ResolveUDPAddr("udp", a)
	if err != nil {
		return netip.AddrPort{}, err
	}
	ap := ua.AddrPort()
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()), nil
}

// Addr is the socket's address (the port the system chose for :0).
func (c *Cuts) Addr() netip.AddrPort { return c.conn.LocalAddr().(*net.UDPAddr).AddrPort() }

// send ships a frame that reached a stand-in: its last bit has left the
// local transmitter now, its departure. On the loop goroutine.
func (c *Cuts) send(e *end, f *emulator.Frame) {
	departure := c.s.Now()
	c.buf = AppendFrame(c.buf[:0], Frame{Link: uint16(e.Index), BToA: !e.LocalIsA, Seq: e.outSeq, Departure: departure, Data: f.Data})
	e.outSeq++
	f.Release()
	if _, err := c.conn.WriteToUDPAddrPort(c.buf, e.peer.addr); err != nil {
		e.sendErrs++
		return
	}
	e.sendLate.Record(c.loop.Now() - departure)
	e.sent++
}

// read serves the socket until Close, or until the loop takes it over
// (handOver): frames go to the loop, pings are answered at once, pongs
// are the clock's samples.
func (c *Cuts) read() {
	defer close(c.readerDone)
	buf := make([]byte, 65536)
	for {
		n, from, err := c.conn.ReadFromUDPAddrPort(buf)
		now := c.loop.Now()
		if err != nil {
			if errors.Is(err, net.ErrClosed) || c.handedOver.Load() {
				return
			}
			continue
		}
		c.handle(buf[:n], from, now, false)
	}
}

// handle is one datagram read at now from from: on the loop goroutine
// (onLoop) a frame is scheduled at once, elsewhere it is handed to the
// loop.
func (c *Cuts) handle(b []byte, from netip.AddrPort, now time.Duration, onLoop bool) {
	from = netip.AddrPortFrom(from.Addr().Unmap(), from.Port())
	f, ping, isFrame, err := Decode(b)
	if err != nil {
		c.strays.Add(1)
		return
	}
	switch {
	case isFrame:
		// A frame is its link's and direction's, and comes from the
		// address its peer's pongs came from: that may not be the address
		// the peer was given by (a host with several), but a datagram
		// from anyone else does not reach the lab.
		e := c.in[key(f.Link, f.BToA)]
		if e == nil || from != e.peer.from {
			c.strays.Add(1)
			return
		}
		a := arrival{e: e, seq: f.Seq, departure: f.Departure, at: now, data: append([]byte(nil), f.Data...)}
		if onLoop {
			c.schedule(a)
		} else {
			c.arrive(a)
		}
	case !ping.Pong:
		if ping.To != c.id {
			c.strays.Add(1) // for another part: its pinger waits, and says so
			return
		}
		// The pong carries this lab's tag: a pinger of another lab (or of
		// another version of its links) sees the difference.
		ping.Pong, ping.Tag, ping.T2, ping.T3 = true, c.tag, now, c.loop.Now()
		c.conn.WriteToUDPAddrPort(AppendPing(nil, ping), from)
	default:
		p := c.byID[ping.To]
		if p == nil {
			c.strays.Add(1)
			return
		}
		if ping.Tag != c.tag {
			p.mu.Lock()
			p.tagErr = fmt.Errorf("the instance at %s (part %s) runs another lab, or another version of this lab's links: start every part from the same lab file", from, p.name)
			p.mu.Unlock()
			return
		}
		p.from = from
		p.add(Sample{T1: ping.T1, T2: ping.T2, T3: ping.T3, T4: now})
	}
}

// Watcher is a loop that reads a descriptor itself when it is readable
// (kernel.Loop.Watch).
type Watcher interface {
	Watch(fd int, read func()) error
}

// handOver gives the socket to the loop, if it is a Watcher and this
// system lets it read the socket directly: the reader goroutine stops,
// and the loop reads datagrams in its passes (readReady), as it reads
// TAPs, with no other thread to wake on the way. Call it before the
// loop runs.
func (c *Cuts) handOver() error {
	w, ok := c.loop.(Watcher)
	if !ok || !rawRead {
		return nil
	}
	rc, err := c.conn.SyscallConn()
	if err != nil {
		return err
	}
	c.handedOver.Store(true)
	c.conn.SetReadDeadline(time.Now()) // the reader's read ends
	<-c.readerDone
	c.conn.SetReadDeadline(time.Time{})
	c.raw = rc
	var fd int
	rc.Control(func(f uintptr) { fd = int(f) })
	return w.Watch(fd, c.readReady)
}

// readReady reads every datagram waiting, on the loop goroutine.
func (c *Cuts) readReady() {
	if c.rbuf == nil {
		c.rbuf = make([]byte, 65536)
	}
	for {
		n, from, ok := recvFrom(c.raw, c.rbuf)
		if !ok {
			return
		}
		c.handle(c.rbuf[:n], from, c.loop.Now(), true)
	}
}

// add records an exchange and moves the offset frames are read with.
func (p *peer) add(s Sample) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clock.Add(s)
	p.answers++
	p.offset.Store(int64(p.clock.Estimate().Offset))
}

func (p *peer) estimate() (Estimate, int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.clock.Estimate(), p.answers, p.tagErr
}

// ping sends one clock exchange's ping.
func (c *Cuts) ping(p *peer) {
	p.mu.Lock()
	p.seq++
	seq, to := p.seq, p.addr
	p.mu.Unlock()
	if !to.IsValid() {
		a, err := resolve(p.spec)
		if err != nil {
			return // not yet: Start asks again
		}
		p.mu.Lock()
		p.addr, to = a, a
		p.mu.Unlock()
	}
	b := AppendPing(nil, Ping{Tag: c.tag, Seq: seq, To: p.id, T1: c.loop.Now()})
	c.conn.WriteToUDPAddrPort(b, to)
}

// arrive hands a frame to the loop; one call drains all that came
// meanwhile.
func (c *Cuts) arrive(a arrival) {
	c.mu.Lock()
	c.inbox = append(c.inbox, a)
	wake := !c.draining
	c.draining = true
	c.mu.Unlock()
	if wake {
		c.loop.Do(c.drain)
	}
}

// drain schedules what arrived meanwhile. On the loop goroutine.
func (c *Cuts) drain() {
	c.mu.Lock()
	in := c.inbox
	c.inbox, c.draining = c.spare[:0], false
	c.mu.Unlock()
	for i, a := range in {
		c.schedule(a)
		in[i] = arrival{}
	}
	c.spare = in[:0]
}

// schedule releases a frame from the peer at departure + delay, on our
// clock by the offset estimated now; one that came after that is late,
// counted, and goes at once. Frames the peer sent before this instance
// agreed on time with it are dropped, counted as late. On the loop
// goroutine.
func (c *Cuts) schedule(a arrival) {
	e := a.e
	e.received++
	if a.seq > e.nextSeq {
		e.lost += uint64(a.seq - e.nextSeq)
	}
	if a.seq >= e.nextSeq {
		e.nextSeq = a.seq + 1
	}
	due := a.departure - time.Duration(e.peer.offset.Load()) + e.Delay
	if a.at > due {
		e.late++
		e.lateness.Record(a.at - due)
	} else {
		e.slack.Record(due - a.at)
	}
	if e.Limit > 0 && len(e.queue) >= e.Limit {
		e.limitDrops++
		return
	}
	at := max(due, e.lastAt) // frames never overtake
	e.lastAt = at
	e.queue = append(e.queue, release{at: at, data: a.data})
	if !e.timer.Pending() {
		e.timer.Reset(e.queue[0].at)
	}
}

// release hands the frames due by now to the local end's port.
func (c *Cuts) release(e *end) {
	now := c.s.Now()
	n := 0
	for n < len(e.queue) && e.queue[n].at <= now {
		r := e.queue[n]
		e.queue[n] = release{}
		n++
		c.nextID++
		e.port.Receive(&emulator.Frame{Data: r.data, ID: 1<<63 | c.nextID, Born: now})
	}
	e.queue = append(e.queue[:0], e.queue[n:]...)
	if len(e.queue) > 0 {
		e.timer.Reset(e.queue[0].at)
	}
}

// Start agrees on time with every peer: it pings each until it answers
// (within cfg.Wait), then takes Exchanges exchanges and refuses any cut
// whose delay is below the measured one-way latency plus jitter, with
// the figures. After it returns nil the exchanges go on, one every
// PingEvery, until Close.
func (c *Cuts) Start(ctx context.Context, cfg Config) error {
	wait := cfg.Wait
	if wait <= 0 {
		wait = DefaultWait
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	for _, p := range c.peers {
		if cfg.Log != nil {
			fmt.Fprintf(cfg.Log, "cut: waiting for part %s at %s\n", p.name, p.spec)
		}
		for {
			_, answers, tagErr := p.estimate()
			if tagErr != nil {
				return tagErr
			}
			if answers > 0 {
				break
			}
			c.ping(p)
			select {
			case <-ctx.Done():
				return fmt.Errorf("part %s at %s did not answer within %v: is it started, with --cut-peer %s=%s? (%w)", p.name, p.spec, wait, c.part.Name, c.Addr(), ctx.Err())
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	for range Exchanges {
		for _, p := range c.peers {
			c.ping(p)
		}
		time.Sleep(ExchangeGap)
	}
	time.Sleep(50 * time.Millisecond) // the last pongs
	if err := c.check(); err != nil {
		return err
	}
	if err := c.handOver(); err != nil {
		return err
	}
	c.wg.Add(1)
	go c.keepMeasuring()
	return nil
}

// check refuses the cuts the exchanges so far say are too short.
func (c *Cuts) check() error {
	var errs []error
	for _, e := range c.ends {
		est, _, tagErr := e.peer.estimate()
		if tagErr != nil {
			return tagErr
		}
		errs = append(errs, Refuse(e.Name(), e.Peer, min(e.Delay, e.OutDelay), est))
	}
	return errors.Join(errs...)
}

// keepMeasuring pings every peer every PingEvery until Close.
func (c *Cuts) keepMeasuring() {
	defer c.wg.Done()
	t := time.NewTicker(PingEvery)
	defer t.Stop()
	for {
		select {
		case <-c.done:
			return
		case <-t.C:
			for _, p := range c.peers {
				c.ping(p)
			}
		}
	}
}

// Stats are the cuts' rows; call it on the loop goroutine.
func (c *Cuts) Stats() []control.CutStats {
	out := make([]control.CutStats, 0, len(c.ends))
	for _, e := range c.ends {
		est, _, _ := e.peer.estimate()
		st := control.CutStats{
			Link: e.Name(), Peer: e.Peer, Address: e.peer.addr.String(), Delay: e.Delay,
			Sent: e.sent, Received: e.received, Lost: e.lost, Late: e.late,
			Lateness: e.lateness.Summary(), Slack: e.slack.Summary(), SendLate: e.sendLate.Summary(),
			LimitDrops: e.limitDrops, SendErrors: e.sendErrs,
			Exchanges: est.Samples, Offset: est.Offset, Latency: est.Latency, Jitter: est.Jitter,
			RTTMin: est.RTTMin, RTTMedian: est.RTTMedian, RTTMax: est.RTTMax,
		}
		if err := Refuse(e.Name(), e.Peer, min(e.Delay, e.OutDelay), est); err != nil {
			st.Warning = err.Error()
		}
		out = append(out, st)
	}
	return out
}

// Close stops the exchanges and the reader and closes the socket.
func (c *Cuts) Close() error {
	select {
	case <-c.done:
		return nil
	default:
	}
	close(c.done)
	err := c.conn.Close()
	c.wg.Wait()
	<-c.readerDone
	return err
}
