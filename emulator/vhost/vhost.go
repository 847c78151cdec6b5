// Package vhost makes hosts userspace TCP/IP stacks (gVisor's netstack)
// that run in model time on a lab's one scheduler, each as a Spec gives it
// (backend/virtual reads the specs from a lab file): every host
// interface is a netstack NIC attached to the same emulator.HostPort that a
// TAP feeds in real time, so NICs, links, switches, hubs, ATM adapters,
// routers and `cpu:` limits apply unchanged. It needs no root and no
// syscalls, and a run is deterministic.
//
// # Determinism
//
// Netstack does its TCP work on goroutines of its own (a pool of
// processors that handle inbound segments) and its timers through a
// tcpip.Clock. The package makes every piece of that work happen on one
// goroutine at a time, at a model time, in a fixed order:
//
//   - Time: each host's tcpip.Clock reads the scheduler, and AfterFunc
//     queues the callback as a scheduler event; it runs on the driver's
//     goroutine at its model time. Equal times run in the order scheduled.
//   - A barrier after every touch: whatever enters a stack on the driver's
//     goroutine (a frame delivered to a NIC, a timer's callback, an
//     application's call) is followed by a barrier: TCP's Pause, which
//     returns only once every processor has emptied its queue, then Resume
//     (skipped when no TCP segment entered since the last: only those give
//     the processors work). Processors therefore run only while the driver waits in Pause, so
//     their work (segments sent, timers set) is done before the driver
//     moves on, in an order fixed by the input.
//   - One processor a stack: netstack sizes the pool by GOMAXPROCS when a
//     stack is made; New makes each stack with GOMAXPROCS set to 1 for that
//     moment, so a stack's work never splits between two goroutines and
//     nothing depends on the machine's core count.
//   - Applications run on the driver's goroutine, never block, and are
//     woken after a barrier, in the order they were registered.
//   - Outbound frames wait in the NIC's queue (the host's qdisc) and are
//     handed to the HostPort after the barrier, in the order netstack wrote
//     them, as its ring has room.
//   - Randomness (initial sequence numbers, ports, IP IDs, the processor
//     hash, the processing jitter) comes from the stack's RandSource and
//     SecureRNG and the host's own generator, seeded from the lab's seed
//     and the host's name.
//
// # Processing jitter
//
// A real host takes a varying time to react to a frame (an interrupt, a
// softirq, a wake-up); netstack hosts would react at the instant of
// arrival, so two identical senders clocked by the same receiver stay in
// lockstep and meet a full queue at the same phase every time (one of
// them loses every drop). Each frame a host receives therefore enters its
// stack after a delay drawn uniformly from [0, Settings.Jitter) by the
// host's seeded generator, in arrival order (a frame never overtakes the
// one before it). The draws are model-time events like any other, so runs
// stay deterministic.
//
// The same lab and seed give the same packets at the same model times,
// with GOMAXPROCS 1 or 64 (TestDeterminism hashes every frame on every
// link to show it).
package vhost

import (
	"cmp"
	"fmt"
	"math/rand"
	randv2 "math/rand/v2"
	"net/netip"
	"runtime"
	"slices"
	"sync"
	"time"

	"gvisor.dev/gvisor/pkg/buffer"
	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/link/channel"
	"gvisor.dev/gvisor/pkg/tcpip/link/ethernet"
	"gvisor.dev/gvisor/pkg/tcpip/network/arp"
	"gvisor.dev/gvisor/pkg/tcpip/network/ipv4"
	"gvisor.dev/gvisor/pkg/tcpip/stack"
	"gvisor.dev/gvisor/pkg/tcpip/transport/icmp"
	"gvisor.dev/gvisor/pkg/tcpip/transport/tcp"
	"gvisor.dev/gvisor/pkg/tcpip/transport/udp"
	"gvisor.dev/gvisor/pkg/waiter"

	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/emulator/sched"
)

// Netstack is the gVisor module version the hosts run (go.mod pins it);
// a run records it beside its results.
const Netstack = "gvisor.dev/gvisor v0.0.0-20260905035102-160fafc42237"

// defaultMTU is the MTU of a host without interfaces: Ethernet's.
const defaultMTU = 1500

// QueueFrames is a virtual host's queue in front of its NIC, in frames: a
// Linux txqueuelen's worth. Netstack's send buffers bound what TCP puts
// in it; frames beyond it are dropped and counted (Host.QueueDrops).
const QueueFrames = 1000

// Lab is a lab's hosts as netstack stacks on the network's scheduler.
type Lab struct {
	Sched *sched.Scheduler
	Hosts map[string]*Host // by node name
	order []*Host          // in file order
	frame uint64           // the last frame ID given out
	port  *uint16          // the last data port given out, shared by a split lab's parts (SharePorts)

	// Drive, if set, is how a test waits on the lab (vperf's Wait): it
	// runs the lab until done reports true or the lab's clock reaches
	// limit. A split lab's part sets it to run every part (window.Group's
	// RunLead); nil: the lab's scheduler is stepped.
	Drive func(done func() bool, limit time.Duration)
}

// SharePorts makes l give out the data ports o gives out, from one count:
// the parts of a split lab number their tests as the lab whole does.
func (l *Lab) SharePorts(o *Lab) { l.port = o.port }

// Port gives each test its own data port, from 20001 up: a lab's own
// count, so a point's ports do not depend on what ran before it in the
// process.
func (l *Lab) Port() uint16 {
	*l.port++
	if *l.port <= 20000 {
		*l.port = 20001
	}
	return *l.port
}

// Host is one lab host: a netstack stack with a NIC per interface.
type Host struct {
	Name     string
	Stack    *stack.Stack
	Settings Settings

	lab      *Lab
	tcp      stack.TransportProtocol
	segs     *tcpip.StatCounter // TCP segments the stack has queued for its processor
	seen     uint64             // segs at the last barrier
	nics     []*nic
	jitter   *randv2.Rand // draws processing delays (Settings.Jitter)
	settling bool
	drain    *Watch
	// Barriers counts the barriers taken (segments were waiting).
	Barriers uint64
	// TxFrames counts the frames the host has handed to its NICs, TxBytes
	// their bytes (Ethernet header on, FCS off: a real NIC's tx_bytes).
	TxFrames, TxBytes uint64
	// ipprotos are the IP protocols applications run themselves (OpenIP).
	ipprotos []*IPProto

	mu      sync.Mutex // guards ready: waiter callbacks come from netstack's goroutines
	ready   []*Watch
	watches int
}

// nic is a host interface: netstack's Ethernet endpoint on a channel
// whose outbound queue the HostPort drains.
type nic struct {
	h    *Host
	id   tcpip.NICID
	port *emulator.HostPort
	ch   *channel.Endpoint
	last time.Duration // when the last frame received enters the stack
	// native are the native AAL VCs open on the interface, by VPI<<16|VCI.
	native map[uint32]*NativeVC
}

// Spec is one host to make: its settings, its interfaces (each attached
// to a HostPort of the network on the scheduler) and its routes, as a lab
// file gives them (backend/virtual reads them from one).
type Spec struct {
	Name     string
	Where    string // "file:line" of the host in its lab file, for errors
	Settings Settings
	NICs     []NIC
	Routes   []Route
}

// NIC is a host interface.
type NIC struct {
	Name string
	Port *emulator.HostPort // the network's end of its link; nil: it has none
	MTU  int
	MAC  string       // its Ethernet address, as net.HardwareAddr's bytes
	Addr netip.Prefix // its IPv4 address and subnet; invalid: none
}

// Route is a static route through a gateway.
type Route struct {
	To    netip.Prefix
	Via   netip.Addr
	Where string // "file:line" of the route, for errors
}

// New makes every host a netstack stack on s, attached to its ports, its
// randomness seeded from seed and its name.
func New(s *sched.Scheduler, seed uint64, hosts []Spec) (*Lab, error) {
	l := &Lab{Sched: s, Hosts: map[string]*Host{}, port: new(uint16)}
	for _, spec := range hosts {
		h, err := l.newHost(seed, spec)
		if err != nil {
			return nil, err
		}
		l.Hosts[spec.Name] = h
		l.order = append(l.order, h)
	}
	return l, nil
}

// procs serialises the moments New sets GOMAXPROCS to 1.
var procs sync.Mutex

// newStack makes a stack whose TCP has one processor goroutine.
func newStack(opts stack.Options) *stack.Stack {
	procs.Lock()
	defer procs.Unlock()
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	return stack.New(opts)
}

func (l *Lab) newHost(labSeed uint64, spec Spec) (*Host, error) {
	set := spec.Settings
	h := &Host{Name: spec.Name, Settings: set, lab: l}
	seed := seedOf(labSeed, "vhost/"+spec.Name)
	h.jitter = randv2.New(randv2.NewPCG(seedOf(seed, "jitter"), seed))
	var key [32]byte
	for i := range 4 {
		s := seedOf(seed, fmt.Sprint(i))
		for j := range 8 {
			key[8*i+j] = byte(s >> (8 * j))
		}
	}
	h.Stack = newStack(stack.Options{
		NetworkProtocols:   []stack.NetworkProtocolFactory{ipv4.NewProtocol, arp.NewProtocol},
		TransportProtocols: []stack.TransportProtocolFactory{tcp.NewProtocol, udp.NewProtocol, icmp.NewProtocol4},
		Clock:              &clock{h: h, s: l.Sched},
		RandSource:         &lockedSource{src: rand.NewSource(int64(seed))},
		SecureRNG:          &lockedReader{r: randv2.NewChaCha8(key)},
	})
	h.tcp = h.Stack.TransportProtocolInstance(tcp.ProtocolNumber)
	h.segs = h.Stack.Stats().TCP.ValidSegmentsReceived
	if err := set.apply(h.Stack); err != nil {
		return nil, fmt.Errorf("%s: host %s: %w", spec.Where, spec.Name, err)
	}
	var routes []tcpip.Route
	for i, iface := range spec.NICs {
		port := iface.Port
		if port == nil {
			return nil, fmt.Errorf("host %s: interface %s has no link", spec.Name, iface.Name)
		}
		c := &nic{h: h, id: tcpip.NICID(i + 1), port: port,
			ch: channel.New(QueueFrames, uint32(iface.MTU+emulator.EtherHeader), tcpip.LinkAddress(iface.MAC))}
		if err := h.Stack.CreateNIC(c.id, ethernet.New(c.ch)); err != nil {
			return nil, fmt.Errorf("host %s: nic %s: %s", spec.Name, iface.Name, err)
		}
		port.Sink = c.receive
		port.SetOnSpace(h.settle)
		h.nics = append(h.nics, c)
		if iface.Addr.IsValid() {
			a := tcpip.AddressWithPrefix{Address: tcpip.AddrFrom4(iface.Addr.Addr().As4()), PrefixLen: iface.Addr.Bits()}
			if err := h.Stack.AddProtocolAddress(c.id, tcpip.ProtocolAddress{Protocol: ipv4.ProtocolNumber, AddressWithPrefix: a}, stack.AddressProperties{}); err != nil {
				return nil, fmt.Errorf("host %s: address %s: %s", spec.Name, iface.Addr, err)
			}
			routes = append(routes, tcpip.Route{Destination: a.Subnet(), NIC: c.id})
		}
	}
	for _, r := range spec.Routes {
		via := r.Via
		var out tcpip.NICID
		for i, iface := range spec.NICs {
			if iface.Addr.IsValid() && iface.Addr.Masked().Contains(via) {
				out = tcpip.NICID(i + 1)
			}
		}
		if out == 0 {
			return nil, fmt.Errorf("%s: host %s: gateway %s is on none of its subnets", r.Where, spec.Name, via)
		}
		dst := tcpip.AddressWithPrefix{Address: tcpip.AddrFrom4(r.To.Masked().Addr().As4()), PrefixLen: r.To.Bits()}
		routes = append(routes, tcpip.Route{Destination: dst.Subnet(), Gateway: tcpip.AddrFrom4(via.As4()), NIC: out})
	}
	// Longest prefix first, as the kernel chooses.
	slices.SortStableFunc(routes, func(a, b tcpip.Route) int { return cmp.Compare(b.Destination.Prefix(), a.Destination.Prefix()) })
	h.Stack.SetRouteTable(routes)
	return h, nil
}

// receive hands a frame the emulator delivered to the stack, after the
// host's processing jitter.
func (c *nic) receive(f *emulator.Frame) {
	if at := c.entry(); at > c.h.lab.Sched.Now() {
		c.h.lab.Sched.At(at, func() { c.inject(f) })
		return
	}
	c.inject(f)
}

// entry returns when a frame received now enters the stack: after a
// delay drawn from [0, Jitter), and not before the frame ahead of it.
func (c *nic) entry() time.Duration {
	now := c.h.lab.Sched.Now()
	if j := c.h.Settings.Jitter; j > 0 {
		c.last = max(now+time.Duration(c.h.jitter.Int64N(int64(j))), c.last)
	}
	return max(now, c.last)
}

// inject hands a frame to the stack and runs it to quiescence.
func (c *nic) inject(f *emulator.Frame) {
	if c.nativeIn(f.Data) || c.ipIn(f.Data) {
		c.h.settle()
		return
	}
	pkt := stack.NewPacketBuffer(stack.PacketBufferOptions{Payload: buffer.MakeWithData(f.Data)})
	c.ch.InjectInbound(0, pkt)
	pkt.DecRef()
	c.h.settle()
}

// flush hands queued frames to the NIC while its ring has room.
func (c *nic) flush() {
	sent := false
	for c.port.CanAccept() {
		pkt := c.ch.Read()
		if pkt == nil {
			break
		}
		b := pkt.ToBuffer()
		data := b.Flatten()
		b.Release()
		pkt.DecRef()
		c.h.lab.frame++
		c.port.Input(&emulator.Frame{Data: data, ID: c.h.lab.frame, Born: c.h.lab.Sched.Now()})
		c.h.TxFrames++
		c.h.TxBytes += uint64(len(data))
		sent = true
	}
	if sent && c.h.drain != nil {
		c.h.drain.Wake()
	}
}

// settle is the barrier after anything entered the stack: TCP's
// processors finish their queued work, woken applications run (each
// followed by the barrier again), and the frames written go to the NICs
// (which may wake an application waiting for room), until nothing is left.
func (h *Host) settle() {
	if h.settling { // an application's call inside a settle: the loop covers its wake-ups
		h.barrier()
		return
	}
	h.settling = true
	for {
		h.barrier()
		ready := h.takeReady()
		if len(ready) == 0 {
			for _, c := range h.nics {
				c.flush()
			}
			if ready = h.takeReady(); len(ready) == 0 {
				break
			}
		}
		slices.SortFunc(ready, func(a, b *Watch) int { return cmp.Compare(a.id, b.id) })
		for _, w := range ready {
			if !w.cancelled {
				w.fn()
			}
		}
	}
	h.settling = false
}

// barrier returns once TCP's processors have done all their queued work.
// Only a segment received gives them work (netstack counts it as valid
// before queueing it; timers and applications' calls run on the caller's
// goroutine and queue work only for segments already queued, which the
// last barrier saw done), so a barrier with no segment since the last is
// skipped: Pause and Resume cost four goroutine switches even when idle.
func (h *Host) barrier() {
	if n := h.segs.Value(); n != h.seen {
		h.seen = n
		h.Barriers++
		h.tcp.Pause()
		h.tcp.Resume()
	}
}

// takeReady returns the watches woken since it was last called.
func (h *Host) takeReady() []*Watch {
	h.mu.Lock()
	defer h.mu.Unlock()
	ready := h.ready
	h.ready = nil
	for _, w := range ready {
		w.queued = false
	}
	return ready
}

// MTU returns the MTU of the host's first interface.
func (h *Host) MTU() int {
	if len(h.nics) == 0 {
		return defaultMTU
	}
	return int(h.Stack.NICInfo()[h.nics[0].id].MTU)
}

// Queued returns the frames waiting in the host's queues for its NICs.
func (h *Host) Queued() int {
	n := 0
	for _, c := range h.nics {
		n += c.ch.NumQueued()
	}
	return n
}

// Sent reports whether everything the host wrote has left it: its queues
// are empty and so are its NICs (their rings, the frame on the wire, an
// ATM adapter's PDUs in cells) — a sender's last bit is out.
func (h *Host) Sent() bool {
	for _, c := range h.nics {
		if c.ch.NumQueued() > 0 {
			return false
		}
		if q, ok := c.port.TX.(interface{ Queued() int }); ok && q.Queued() > 0 {
			return false
		}
		if c.port.CPU != nil && !c.port.CanAccept() {
			return false
		}
	}
	return true
}

// OnDrain sets a watch woken whenever frames leave the host's queues for
// its NICs (an application that paces itself by them, as a blocking UDP
// sender is paced by its socket buffer); nil for none.
func (h *Host) OnDrain(w *Watch) { h.drain = w }

// Do runs f on the driver's goroutine now (the caller is an event) and
// then the barrier: the way applications call the stack from a scheduler
// event of their own.
func (h *Host) Do(f func()) {
	f()
	h.settle()
}

// QueueDrops are frames dropped because the host's queue in front of its
// NICs was full.
func (h *Host) QueueDrops() uint64 {
	return h.Stack.Stats().NICs.TxPacketsDroppedNoBufferSpace.Value()
}

// Watch calls an application back when an endpoint's events fire.
type Watch struct {
	h         *Host
	id        int
	fn        func()
	q         *waiter.Queue
	entry     waiter.Entry
	queued    bool // guarded by h.mu
	cancelled bool
}

// Watch arranges for fn to run on the driver's goroutine, after the
// barrier, whenever q signals one of mask's events. Callbacks of one
// settle run in the order their watches were made.
func (h *Host) Watch(q *waiter.Queue, mask waiter.EventMask, fn func()) *Watch {
	h.watches++
	w := &Watch{h: h, id: h.watches, fn: fn, q: q}
	w.entry = waiter.NewFunctionEntry(mask, func(waiter.EventMask) {
		h.mu.Lock()
		if !w.queued {
			w.queued = true
			h.ready = append(h.ready, w)
		}
		h.mu.Unlock()
	})
	q.EventRegister(&w.entry)
	return w
}

// Waker returns a watch on no endpoint: fn runs when it is woken (Wake,
// or as the host's OnDrain).
func (h *Host) Waker(fn func()) *Watch {
	h.watches++
	return &Watch{h: h, id: h.watches, fn: fn}
}

// Cancel stops the callbacks.
func (w *Watch) Cancel() {
	w.cancelled = true
	if w.q != nil {
		w.q.EventUnregister(&w.entry)
	}
}

// Wake runs the watch's callback after the current barrier, as if its
// events had fired.
func (w *Watch) Wake() {
	w.h.mu.Lock()
	if !w.queued {
		w.queued = true
		w.h.ready = append(w.h.ready, w)
	}
	w.h.mu.Unlock()
}

// Close destroys every stack (their processor goroutines end).
func (l *Lab) Close() {
	for _, h := range l.order {
		h.Stack.Destroy()
	}
}

// seedOf mixes a name into a seed (FNV-1a), as topologies does for links.
func seedOf(seed uint64, name string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(name); i++ {
		h ^= uint64(name[i])
		h *= 1099511628211
	}
	return seed ^ h
}

// lockedSource is a math/rand source safe for netstack's goroutines.
type lockedSource struct {
	mu  sync.Mutex
	src rand.Source
}

func (s *lockedSource) Int63() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.src.Int63()
}

func (s *lockedSource) Seed(seed int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.src.Seed(seed)
}

// lockedReader is a seeded byte stream standing in for crypto/rand.
type lockedReader struct {
	mu sync.Mutex
	r  *randv2.ChaCha8
}

func (r *lockedReader) Read(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.r.Read(p)
}
