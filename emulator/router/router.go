// Package router models IPv4 routers with MPLS label switching: ARP,
// longest-prefix-match forwarding with TTL and checksum, ICMP time exceeded,
// unreachable and echo, and label push, swap and pop with penultimate-hop
// popping and the uniform or pipe TTL models (RFC 3032, 3443). A cost model
// charges each packet CPU time, so that software routers can be reproduced.
// Facts: docs/reference.md §7.
package router

import (
	"encoding/binary"
	"maps"
	"net/netip"
	"slices"
	"time"

	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/emulator/internal/ring"
	"github.com/atmlab/atmlab/emulator/sched"
)

// Config is a router's behaviour.
type Config struct {
	MPLS         bool
	PipeTTL      bool // RFC 3443 pipe model: the LSP is one hop; default uniform
	ExplicitNull bool // the egress asks for label 0 instead of penultimate-hop popping
	Cost         Cost
	// CPU serves the router's packets one at a time; routers given the same
	// CPU share it. Nil with a zero Cost: forwarding takes no time.
	CPU *CPU
}

// Route sends packets for Prefix through Iface to Via (zero: the
// destination itself is on the link).
type Route struct {
	Prefix netip.Prefix
	Via    netip.Addr
	Iface  *Iface
}

// ILM is what a router does with an incoming label: swap it for Out, or
// pop it (Pop), and send to Via through Iface.
type ILM struct {
	Pop   bool
	Out   uint32
	Via   netip.Addr
	Iface *Iface
}

// Router is an IPv4 router, with MPLS when its Config says so. Call only on
// the scheduler goroutine.
type Router struct {
	Name   string
	s      *sched.Scheduler
	cfg    Config
	ifaces []*Iface
	routes []Route                 // longest prefix first
	ftn    map[netip.Prefix]uint32 // FEC (a route's prefix) -> label pushed at ingress
	ilm    map[uint32]ILM
	cpuq   *cpuQueue // the router's queue on its CPU
	// pool holds the frames the router sends, which the next holder
	// releases: forwarding a packet allocates no buffer (a copy per hop
	// was most of gns3-mpls's ATM core's 200 MB/s of garbage).
	pool emulator.Pool
	// held is the frame Receive is handling, whose bytes the packet being
	// routed points into: serve hands it to the CPU job that copies them,
	// which releases it; else Receive releases it when it returns.
	held *emulator.Frame
}

// New returns a router with no interfaces.
func New(s *sched.Scheduler, name string, cfg Config) *Router {
	if cfg.CPU == nil && cfg.Cost != (Cost{}) {
		cfg.CPU = NewCPU(s, 0)
	}
	r := &Router{Name: name, s: s, cfg: cfg, ftn: map[netip.Prefix]uint32{}, ilm: map[uint32]ILM{}}
	if cfg.CPU != nil {
		r.cpuq = cfg.CPU.queue()
	}
	return r
}

// AddIface adds an interface with its MAC, address and MTU; its subnet
// becomes a connected route.
func (r *Router) AddIface(name string, mac [6]byte, addr netip.Prefix, mtu int) *Iface {
	i := &Iface{r: r, name: r.Name + ":" + name, MAC: mac, Addr: addr, MTU: mtu, arp: map[netip.Addr][6]byte{}, pending: map[netip.Addr][]*emulator.Frame{}}
	r.ifaces = append(r.ifaces, i)
	r.AddRoute(Route{Prefix: addr.Masked(), Iface: i})
	return i
}

// Ifaces returns the interfaces in the order they were added.
func (r *Router) Ifaces() []*Iface { return r.ifaces }

// AddRoute adds a route; the longest matching prefix wins.
func (r *Router) AddRoute(rt Route) {
	r.routes = append(r.routes, rt)
	slices.SortStableFunc(r.routes, func(a, b Route) int { return b.Prefix.Bits() - a.Prefix.Bits() })
}

// Config returns the router's configuration.
func (r *Router) Config() Config { return r.cfg }

// Routes returns the routing table, longest prefix first.
func (r *Router) Routes() []Route { return r.routes }

// Route returns the route for exactly prefix p, if any.
func (r *Router) Route(p netip.Prefix) (Route, bool) {
	i := slices.IndexFunc(r.routes, func(rt Route) bool { return rt.Prefix == p })
	if i < 0 {
		return Route{}, false
	}
	return r.routes[i], true
}

// Lookup returns the route for dst, if any.
func (r *Router) Lookup(dst netip.Addr) (Route, bool) {
	for _, rt := range r.routes {
		if rt.Prefix.Contains(dst) {
			return rt, true
		}
	}
	return Route{}, false
}

// Push makes the router an ingress for fec: IP packets routed by fec's route
// leave with label pushed.
func (r *Router) Push(fec netip.Prefix, label uint32) { r.ftn[fec] = label }

// Bind installs what the router does with an incoming label.
func (r *Router) Bind(label uint32, e ILM) { r.ilm[label] = e }

// Bindings returns copies of the router's label tables: what it pushes
// for each FEC at ingress, and what it does with each label it receives.
func (r *Router) Bindings() (push map[netip.Prefix]uint32, ilm map[uint32]ILM) {
	return maps.Clone(r.ftn), maps.Clone(r.ilm)
}

// Owns reports whether a is one of the router's addresses.
func (r *Router) Owns(a netip.Addr) bool {
	return slices.ContainsFunc(r.ifaces, func(i *Iface) bool { return i.Addr.Addr() == a })
}

// ipv4 routes an IP packet that arrived on in (or, with in nil, that the
// router originated).
func (r *Router) ipv4(in *Iface, pkt []byte) {
	st := &in.stats
	if !validIPv4(pkt) || ipTotalLen(pkt) < ipHeaderLen(pkt) || ipTotalLen(pkt) > len(pkt) {
		st.Malformed++
		return
	}
	pkt = pkt[:ipTotalLen(pkt)]
	dst := ipDst(pkt)
	if r.Owns(dst) {
		r.local(in, pkt)
		return
	}
	rt, ok := r.Lookup(dst)
	if !ok {
		st.NoRoute++
		r.icmp(in, pkt, icmpUnreachable, codeNetUnreachable, 0)
		return
	}
	ttl := pkt[8]
	if ttl <= 1 {
		st.TTLExpired++
		r.icmp(in, pkt, icmpTimeExceeded, 0, 0)
		return
	}
	label, push := r.ftn[rt.Prefix]
	push = push && r.cfg.MPLS
	shim := 0
	if push {
		shim = 4
	}
	if len(pkt)+shim > rt.Iface.MTU {
		st.TooBig++
		if ipDontFragment(pkt) {
			r.icmp(in, pkt, icmpUnreachable, codeFragNeeded, rt.Iface.MTU-shim)
		}
		return
	}
	via := r.nextHop(rt, dst)
	// The outgoing frame is built once the CPU takes the packet: a full CPU
	// queue drops it without the copy.
	if !push {
		r.serve(st, &st.Forwarded, r.cfg.Cost.IP, len(pkt), job{op: opForward, out: rt.Iface, via: via, pkt: pkt, ttl: ttl})
		return
	}
	r.serve(st, &st.Pushed, r.cfg.Cost.Push, 4+len(pkt), job{op: opPush, out: rt.Iface, via: via, pkt: pkt, ttl: ttl, label: label})
}

// nextHop is the address a route sends dst to.
func (r *Router) nextHop(rt Route, dst netip.Addr) netip.Addr {
	if rt.Via.IsValid() {
		return rt.Via
	}
	return dst
}

// local answers a packet addressed to the router: an echo request gets a
// reply; anything else ends here.
func (r *Router) local(in *Iface, pkt []byte) {
	h := ipHeaderLen(pkt)
	if pkt[9] != 1 || len(pkt) < h+8 || pkt[h] != icmpEcho {
		in.stats.Local++
		return
	}
	m := slices.Clone(pkt[h:])
	m[0] = icmpEchoReply
	m[2], m[3] = 0, 0
	binary.BigEndian.PutUint16(m[2:], checksum(m))
	r.originate(ipDst(pkt), ipSrc(pkt), m)
}

// icmp sends an ICMP error about pkt back to its source, from the address
// of the interface the router would answer on.
func (r *Router) icmp(in *Iface, pkt []byte, typ, code byte, mtu int) {
	if isICMPError(pkt) {
		return
	}
	back, ok := r.Lookup(ipSrc(pkt))
	if !ok {
		return
	}
	in.stats.ICMPSent++
	r.originate(back.Iface.Addr.Addr(), ipSrc(pkt), icmpError(typ, code, mtu, pkt))
}

// originate sends an ICMP message the router makes itself, as plain IP.
func (r *Router) originate(src, dst netip.Addr, icmp []byte) {
	rt, ok := r.Lookup(dst)
	if !ok {
		return
	}
	f, out := rt.Iface.frame(etherIPv4, 20+len(icmp))
	copy(out, newIPv4(src, dst, 1, icmp))
	r.serve(&rt.Iface.stats, nil, r.cfg.Cost.IP, len(out), job{op: opSend, out: rt.Iface, via: r.nextHop(rt, dst), send: f})
}

// mpls switches a labelled packet by its top entry.
func (r *Router) mpls(in *Iface, pkt []byte) {
	st := &in.stats
	switch {
	case len(pkt) < 4:
		st.Malformed++
		return
	case !r.cfg.MPLS:
		st.NoLabel++
		return
	}
	top := ParseEntry(pkt)
	if top.Label == ExplicitNull && top.Bottom { // the egress pops label 0 itself
		// The inner packet's TTL may change, and a received frame's bytes
		// are never changed (emulator.Frame): it is copied into a frame of
		// the router's pool, which the job holds instead of the received one.
		c := r.pool.Get(len(pkt) - 4)
		inner := c.Data
		copy(inner, pkt[4:])
		if validIPv4(inner) && !r.cfg.PipeTTL {
			setTTL(inner, min(top.TTL, inner[8]))
		}
		received := r.held
		r.held = c
		r.serve(st, &st.Popped, r.cfg.Cost.Pop, len(inner), job{op: opRoute, in: in, pkt: inner})
		if r.held != nil { // refused, or routed already (no CPU)
			r.held.Release()
		}
		r.held = received
		return
	}
	e, ok := r.ilm[top.Label]
	if !ok {
		st.NoLabel++
		return
	}
	if top.TTL <= 1 {
		st.TTLExpired++
		if inner := pkt[4:]; top.Bottom && validIPv4(inner) {
			r.icmp(in, inner, icmpTimeExceeded, 0, 0)
		}
		return
	}
	if !e.Pop {
		if len(pkt) > e.Iface.MTU {
			st.TooBig++
			return
		}
		r.serve(st, &st.Swapped, r.cfg.Cost.Swap, len(pkt), job{op: opSwap, out: e.Iface, via: e.Via, pkt: pkt, ttl: top.TTL, label: e.Out, bottom: top.Bottom})
		return
	}
	rest := pkt[4:]
	if top.Bottom && !validIPv4(rest) {
		st.Malformed++
		return
	}
	r.serve(st, &st.Popped, r.cfg.Cost.Pop, len(rest), job{op: opPop, out: e.Iface, via: e.Via, pkt: rest, ttl: top.TTL, bottom: top.Bottom})
}

// A job is what one operation's CPU time buys: a packet to send on, or
// to route again. It is a value the CPU queues, not a closure, so that
// forwarding a packet allocates nothing (a closure a packet was most of
// what gns3-mpls's routers left for the collector).
type job struct {
	op    jobOp
	in    *Iface     // opRoute: the interface the packet came in on
	out   *Iface     // the interface it leaves by, towards via
	via   netip.Addr // the next hop
	pkt   []byte     // the packet (opPop: below the popped entry), in the job's frame
	ttl   uint8      // the IP TTL (opForward, opPush) or the top entry's (opSwap, opPop)
	label uint32     // the label pushed (opPush) or swapped in (opSwap)
	// bottom: the popped or swapped entry was the last of the stack.
	bottom bool
	send   *emulator.Frame // opSend: the frame, built already
	// r is the router whose job it is; f is the frame pkt points into,
	// released once the job is done (nil: none, or not taken: no CPU).
	r *Router
	f *emulator.Frame
}

// jobOp is what a job does once the CPU has spent its time.
type jobOp uint8

const (
	opForward jobOp = iota // send an IP packet on, its TTL decremented
	opPush                 // send an IP packet on with a label pushed
	opSwap                 // send a labelled packet on with its top label swapped
	opPop                  // send what is below the top entry on
	opRoute                // route the IP packet below an explicit null
	opSend                 // send a frame the router made (ICMP)
)

// do carries out j. The outgoing frame is built only now: a full CPU
// queue drops a packet without the copy.
func (r *Router) do(j *job) {
	switch j.op {
	case opForward:
		f, out := j.out.frame(etherIPv4, len(j.pkt))
		copy(out, j.pkt)
		setTTL(out, j.ttl-1)
		j.out.forward(j.via, f)
	case opPush:
		f, out := j.out.frame(etherMPLS, 4+len(j.pkt))
		copy(out[4:], j.pkt)
		mttl := j.ttl - 1 // uniform: the push hop counts (RFC 3443)
		if r.cfg.PipeTTL {
			setTTL(out[4:], j.ttl-1) // pipe: the ingress is one IP hop, the LSP another
			mttl = 255
		}
		binary.BigEndian.PutUint32(out, Entry{Label: j.label, Bottom: true, TTL: mttl}.Word())
		j.out.forward(j.via, f)
	case opSwap:
		f, out := j.out.frame(etherMPLS, len(j.pkt))
		copy(out, j.pkt)
		binary.BigEndian.PutUint32(out, Entry{Label: j.label, Bottom: j.bottom, TTL: j.ttl - 1}.Word()) // TC reset to 0, as Linux does
		j.out.forward(j.via, f)
	case opPop:
		typ := uint16(etherMPLS)
		if j.bottom {
			typ = etherIPv4
		}
		f, out := j.out.frame(typ, len(j.pkt))
		copy(out, j.pkt)
		switch {
		case r.cfg.PipeTTL:
		case j.bottom: // uniform: the decremented label TTL becomes the IP TTL
			setTTL(out, j.ttl-1)
		case len(out) >= 4: // uniform: the exposed entry inherits the TTL
			binary.BigEndian.PutUint32(out, ParseEntry(out).Word()&^0xFF|uint32(j.ttl-1))
		}
		j.out.forward(j.via, f)
	case opRoute:
		r.ipv4(j.in, j.pkt)
	case opSend:
		j.out.forward(j.via, j.send)
	}
}

// finish carries out a job the CPU has spent its time on, then releases
// its frame, unless routing the packet again handed it to the next job.
func (r *Router) finish(j *job) {
	received := r.held
	r.held = j.f
	r.do(j)
	if r.held != nil {
		r.held.Release()
	}
	r.held = received
}

// serve charges the router's CPU for one operation on an n-octet packet,
// then does j; j takes the frame being received (held), whose bytes it
// copies, and releases it after. The operation counts in op once the CPU
// has taken it; a full CPU queue drops the packet and counts it in the
// stats of the interface it came in on (or, for a packet the router made,
// goes out on).
func (r *Router) serve(st *emulator.RouterStats, op *uint64, cost time.Duration, n int, j job) {
	if r.cfg.CPU != nil {
		j.r, j.f = r, r.held
		if !r.cfg.CPU.serve(r.cpuq, cost+time.Duration(n)*r.cfg.Cost.PerByte, j) {
			st.CPUDrops++
			return
		}
		r.held = nil // the job releases it once it has copied the packet
	}
	if op != nil {
		*op++
	}
	if r.cfg.CPU == nil {
		r.do(&j)
	}
}

// Stats returns a row per interface.
func (r *Router) Stats() []emulator.PortStats {
	var rows []emulator.PortStats
	for _, i := range r.ifaces {
		rows = append(rows, i.Stats())
	}
	return rows
}

// Iface is one interface of a router: an emulator.Port with an address, an
// ARP cache and the packets waiting for it.
type Iface struct {
	r       *Router
	name    string
	MAC     [6]byte
	Addr    netip.Prefix
	MTU     int
	tx      emulator.Transmitter
	arp     map[netip.Addr][6]byte
	pending map[netip.Addr][]*emulator.Frame // Ethernet frames waiting for their next hop's MAC

	rxFrames, rxBytes uint64
	stats             emulator.RouterStats
}

var _ emulator.Port = (*Iface)(nil)

// maxPending is how many frames wait for one unresolved neighbour.
const maxPending = 64

// PortName implements emulator.Port.
func (i *Iface) PortName() string { return i.name }

// SetTX implements emulator.Port.
func (i *Iface) SetTX(t emulator.Transmitter) { i.tx = t }

// Stats implements emulator.Port.
func (i *Iface) Stats() emulator.PortStats {
	row := emulator.RowOf(i.name, i.rxFrames, i.rxBytes, i.tx)
	st := i.stats
	row.Router = &st
	return row
}

// Receive implements emulator.Port: a frame arrived on the interface. The
// router is its last holder: it releases the frame once the packet is
// copied out or dropped (see Router.held).
func (i *Iface) Receive(f *emulator.Frame) {
	prev := i.r.held
	i.r.held = f
	i.receive(f.Data)
	if h := i.r.held; h != nil {
		h.Release()
	}
	i.r.held = prev
}

func (i *Iface) receive(d []byte) {
	if len(d) < emulator.EtherHeader {
		return
	}
	if [6]byte(d[:6]) != i.MAC && d[0]&1 == 0 {
		return // unicast for another station on a shared segment
	}
	i.rxFrames++
	i.rxBytes += uint64(len(d))
	payload := d[emulator.EtherHeader:]
	switch binary.BigEndian.Uint16(d[12:]) {
	case emulator.EtherTypeARP:
		i.arpIn(payload)
	case etherIPv4:
		i.r.ipv4(i, payload)
	case etherMPLS:
		i.r.mpls(i, payload)
	}
}

// frame returns a new frame from the interface of the given EtherType and
// its payload of n octets to fill, from the router's pool; forward sends it.
func (i *Iface) frame(etherType uint16, n int) (f *emulator.Frame, payload []byte) {
	f = i.r.pool.Get(emulator.EtherHeader + n)
	copy(f.Data[6:], i.MAC[:])
	binary.BigEndian.PutUint16(f.Data[12:], etherType)
	return f, f.Data[emulator.EtherHeader:]
}

// forward puts a frame on the link to next hop via, resolving its MAC
// first: frames wait (maxPending at most) while an ARP request is out.
func (i *Iface) forward(via netip.Addr, f *emulator.Frame) {
	mac, ok := i.arp[via]
	if !ok {
		if q := i.pending[via]; len(q) < maxPending {
			i.pending[via] = append(q, f)
		} else {
			f.Release()
		}
		if len(i.pending[via]) == 1 {
			i.transmit(&emulator.Frame{Data: emulator.ARP{Op: emulator.ARPRequest, SHA: i.MAC, SPA: i.Addr.Addr(), TPA: via}.Frame()})
		}
		return
	}
	copy(f.Data, mac[:])
	i.transmit(f)
}

// transmit hands f to the link, which owns it from then on.
func (i *Iface) transmit(f *emulator.Frame) {
	if i.tx == nil {
		f.Release()
		return
	}
	f.Born = i.r.s.Now()
	i.tx.Send(f)
}

// arpIn learns the sender of any ARP packet and answers requests for the
// interface's address.
func (i *Iface) arpIn(p []byte) {
	a, ok := emulator.ParseARP(p)
	if !ok {
		return
	}
	if i.Addr.Contains(a.SPA) {
		i.arp[a.SPA] = a.SHA
		for _, f := range i.pending[a.SPA] {
			copy(f.Data, a.SHA[:])
			i.transmit(f)
		}
		delete(i.pending, a.SPA)
	}
	if a.Op == emulator.ARPRequest && a.TPA == i.Addr.Addr() {
		i.transmit(&emulator.Frame{Data: a.Reply(i.MAC).Frame()})
	}
}

// CPU is the processor of one or more software routers. Each router has
// its own input queue of Limit packets (tail drop); the CPU serves the
// routers' queues round robin, one packet at a time. Downstream routers of
// a chain sharing one CPU therefore never drop what upstream ones already
// spent time on: an overloaded chain forwards at 1 / (sum of the per-hop
// costs) and drops at its first router, as GNS3's routers sharing a host do.
type CPU struct {
	s      *sched.Scheduler
	Limit  int
	queues []*cpuQueue
	next   int // the queue served next, round robin
	busy   bool
	cur    cpuJob       // the job in service
	tick   *sched.Timer // ends the job in service: one timer, no allocation per job
}

type cpuQueue struct{ jobs ring.Ring[cpuJob] }

// cpuJob is work of d; j is done when the CPU has spent it.
type cpuJob struct {
	d time.Duration
	j job
}

// DefaultCPUQueue is a router's CPU queue unless given: a NIC ring's worth.
const DefaultCPUQueue = 1000

// NewCPU returns an idle CPU whose routers queue limit packets each (0: the
// default).
func NewCPU(s *sched.Scheduler, limit int) *CPU {
	if limit == 0 {
		limit = DefaultCPUQueue
	}
	c := &CPU{s: s, Limit: limit}
	c.tick = s.NewTimer(c.finish)
	return c
}

// queue gives a router its input queue on the CPU.
func (c *CPU) queue() *cpuQueue {
	q := &cpuQueue{}
	c.queues = append(c.queues, q)
	return q
}

// serve queues work of d for q; j's router does j when the CPU has spent
// d on it. A full queue refuses the work, j.f stays the caller's: serve
// returns false.
func (c *CPU) serve(q *cpuQueue, d time.Duration, j job) bool {
	if q.jobs.Len() >= c.Limit {
		return false
	}
	q.jobs.Push(cpuJob{d, j})
	if !c.busy {
		c.run()
	}
	return true
}

// run starts the next job, taking the queues in turn.
func (c *CPU) run() {
	for k := range c.queues {
		q := c.queues[(c.next+k)%len(c.queues)]
		if q.jobs.Len() == 0 {
			continue
		}
		c.next = (c.next + k + 1) % len(c.queues)
		c.cur = q.jobs.Pop()
		c.busy = true
		c.tick.Reset(c.s.Now() + c.cur.d)
		return
	}
}

// finish ends the job in service and starts the next.
func (c *CPU) finish() {
	j := c.cur.j
	c.cur = cpuJob{}
	c.busy = false
	j.r.finish(&j)
	if !c.busy {
		c.run()
	}
}

// Cost is a router's CPU time per operation (zero: an ideal wire).
type Cost struct {
	IP, Push, Swap, Pop time.Duration // per packet: an IP lookup, and the label operations
	PerByte             time.Duration // per octet of the packet sent
}
