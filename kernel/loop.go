//go:build linux

package kernel

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/atmlab/atmlab/control"
	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/emulator/hist"
	"github.com/atmlab/atmlab/emulator/sched"
)

// Loop is the real-time driver of a scheduler: one OS thread that waits in
// epoll on every TAP, a timerfd armed for the next event, and an eventfd for
// calls from other goroutines. When it wakes it runs every event whose time
// has passed (at that event's own model time, so departures stay exact),
// reads frames from the TAPs into their NICs (through a stage that dates
// them back when the loop was late: stage.go), and re-arms the timer. It never
// sleeps per frame and never polls at a fixed period (docs/design.md, modelling rule 2).
//
// Model time is wall time since the loop was made; writes to TAPs record
// how late they were in Lateness, read as each ends.
//
// The loop works in passes, each at one reading of the clock: it reads the
// TAPs epoll named, runs the events due then (the frames' among them), and
// serves calls. When the next event is already due after a pass, the next
// pass starts at once, without asking epoll (at most passEvents events run
// between two polls, and a pass that took longer than longPass asks); the
// loop polls only when nothing is due yet. Raised (ShortNice), it yields
// its core after each such poll that found nothing.
type Loop struct {
	// Spin is the longest wait the loop busy-polls instead of sleeping: a
	// timerfd wakes tens of microseconds late here (docs/reference.md §9),
	// longer than a frame takes at 100M and above, so short waits are
	// spun. Spinning happens only while frames are in flight.
	Spin time.Duration
	// Linger is how long the loop keeps polling, when nothing at all is
	// scheduled, after a release that ended a quiet spell of more than a
	// millisecond (a frame out of a long delay): the host usually answers
	// within it, and waking a deeply idle thread costs 100-200 µs here.
	// Busy traffic (streams, fast request/response) never lingers, so it
	// does not lose the CPU the hosts need.
	Linger time.Duration
	// IdleSpin is how long after the last frame the loop, with nothing
	// scheduled, keeps polling its TAPs instead of sleeping, yielding the
	// core before every poll: a host's thread that wants it runs first,
	// and a frame that arrives finds the loop awake (waking a sleeping
	// thread costs ~50 µs of a ping's round trip here). Its CPU time is
	// not counted as the emulator's (control.LoopStats.IdleSpin).
	//
	// It polls at normal priority: at SCHED_IDLE, normal-priority work on
	// both cores (a build, the hosts of a stream) left the loop runnable
	// but not run for 0.3-2 s with a frame waiting (TestLoopIdleNotStarved;
	// TCP timed out through a 1G switch with nothing dropped).
	IdleSpin time.Duration
	// VethRTT is the median ping RTT over a plain veth pair between two
	// namespaces, measured when the lab came up (probe.go): the baseline
	// for the emulator's added latency.
	VethRTT time.Duration
	// LateBound is how far behind the wall clock the model may let a
	// frame from a host enter its NIC: one that would enter later is
	// held back to the bound and counted (stage.enter,
	// control.LoopStats.LateHeld), so that no load makes the loop
	// release frames ever later. At most 0:
	// no bound.
	LateBound time.Duration
	// ReleaseBound is how late after its model time a loop short of CPU
	// (its input overflows its stages: isShort) may hand a frame to a
	// host's TAP: one that would go later is dropped and counted instead
	// (control.LoopStats.LateDropped), so that under load it cannot carry
	// the loop sheds frames, as a flagged count, rather than deliver them
	// late. At most 0: no bound.
	ReleaseBound time.Duration
	// StallBound is the same bound for a loop that kept up and then lost
	// its core once (another thread on the machine took it): it hands
	// what was due meanwhile over that late, up to this bound, since a
	// drop costs TCP a retransmission. At most 0: no bound.
	StallBound time.Duration
	// ShortNice is the nice value the loop's thread takes once it is
	// short of CPU (isShort), until the traffic stops (prioritize): under
	// two 1G floods the loop was one thread of five runnable on two cores
	// (four iperf3s), got a fifth of the machine as each of them did (it
	// waited runnable longer than it ran), and read frames it then had to
	// drop late; the bare relay, with a thread a direction, got two
	// shares. Only a loop that reads frames it cannot carry takes the
	// hosts' CPU this way; one that keeps up stays at its own priority,
	// and a raised one does not poll idle (IdleSpin).
	// 0: the priority never changes.
	ShortNice int

	s     *sched.Scheduler
	start time.Time
	epfd  int
	tfd   int // timerfd: the next event
	efd   int // eventfd: calls from other goroutines
	taps  map[int32]*tap
	// watched are other descriptors the loop reads when they are
	// readable (Watch): a split lab's cut socket.
	watched map[int32]func()
	// backlog are the TAPs whose last read stopped at readBatch with
	// frames left (the loop was behind): the next pass reads them again,
	// after the events due meanwhile have run.
	backlog   []*tap
	spare     []*tap        // the backlog's other buffer, so that reading it allocates nothing
	short     bool          // a read left frames in a TAP, its stage full, with the loop behind (isShort)
	shortFrom time.Duration // the last time, at this pass's clock

	mu    sync.Mutex // guards calls
	calls []func()

	// Owned by the loop goroutine; read them through Do.
	Lateness    hist.Histogram
	Wake        hist.Histogram // how late the passes that released frames began (control.LoopStats.Wake)
	now         time.Duration  // the pass's clock reading
	lastBusy    time.Duration  // the pass clock of the last release or read
	lingerUntil time.Duration
	nextID      uint64
	stopped     bool
	idle        bool          // polling idle, yielding the core
	idleFrom    time.Duration // the thread's CPU time when it began
	idleCPU     time.Duration // CPU time spent polling idle
	idleSpells  uint64        // times it began polling idle
	polls       uint64        // epoll waits
	longPolls   uint64        // of them, polls after a pass longer than longPass with events due
	shared      uint64        // of them, polls that found nothing, raised, after which the loop yielded its core
	rd          reader        // reads frames into pooled ones
	cpuStart    time.Duration
	wallStart   time.Time
	sleptFor    time.Duration // the event the loop last slept towards
	wakeAt      time.Duration // how long before it the loop asked to wake

	// added is Lateness by the spacing of the releases (added.go).
	added added

	// setNice sets the loop thread's nice value (raise); nil: setpriority
	// on the thread that runs Run.
	setNice  func(int) error
	baseNice int  // the thread's nice value when Run began
	raised   bool // at ShortNice
	noRaise  bool // a raise failed (no CAP_SYS_NICE): not tried again
	raises   uint64
	// stall records the spells in which the loop, awake, did not come
	// back to its clock (stall.go); yielded: the last poll yielded the
	// core with nothing to do, so the spell since is no stall.
	stall   stalls
	yielded bool
}

// DefaultSpin is Loop.Spin unless changed: about the timerfd's wake-up
// latency on this machine kind. (Spinning the last millisecond before every
// event instead took the CPU that floods of cells need: OC-3c UDP tests
// fell 5-15 % short.)
const DefaultSpin = 50 * time.Microsecond

// GROHold is the longest a TCP segment delivered to a host with offloads
// waits for the next of its flow, to be written together as one
// super-frame, as a NIC's interrupt moderation and GRO hold frames (an
// igb NIC under load interrupts every ~125 µs). Only full-sized segments
// without PSH wait: a message's last segment, ACKs, pings and UDP go at
// once. The receiving host then acknowledges super-frames, not every
// second segment (at 1G both ways, an ACK every two segments would take
// 2.9 % of each direction's wire).
const GROHold = 100 * time.Microsecond

// DefaultLateBound is Loop.LateBound unless changed: above what a
// loop that keeps up is late by (a pass of 1 ms before it polls, a
// host's thread holding the core for a few milliseconds: release
// lateness p99 0.3-5 ms under load), and a twentieth of the 100 ms two
// 1G floods made it run behind without one. A loop short of CPU holds
// frames back to shortLate instead.
const DefaultLateBound = 5 * time.Millisecond

// shortLate is how far behind the wall clock a loop short of CPU lets a
// frame enter its NIC (instead of LateBound), and how far behind its model
// a loop is before it counts as behind. Every frame held back enters the
// model that late and reaches its host at least that late, so it is well
// under DefaultReleaseBound: held to 5 ms, under two 1G floods every frame
// was released 5-16 ms late (p50 9.7 ms), and a 5 ms release bound would
// have dropped them all. For a loop that keeps up it would be too little:
// a 1G TCP stream read 1 % under its ceiling at load 6, its stalls of 1-5
// ms lost to the model's link.
const shortLate = time.Millisecond

// DefaultReleaseBound is Loop.ReleaseBound unless changed: under load
// it cannot carry the loop's release lateness stays under 5 ms at p99,
// and a frame it could not hand over in time is dropped and counted (a
// point's emulator_lateness cause). With a 50 ms bound, two 1G floods
// read p99 16-25 ms.
const DefaultReleaseBound = 5 * time.Millisecond

// DefaultStallBound is Loop.StallBound unless changed: above the stalls
// a loaded machine gives a thread that keeps up (release lateness max
// 6-12 ms under a 1G TCP stream at load 6). At 5 ms for every frame, that
// stream retransmitted 200 segments in 6 s (TestGSOGigabit; none at 50
// ms), and at 10 ms TCP_RR over a 5 ms delay lost 4-12 frames a run.
const DefaultStallBound = 50 * time.Millisecond

// DefaultShortNice is Loop.ShortNice unless changed: a weight of about
// nine threads at nice 0 (the kernel's table), so that beside the four
// iperf3s of two floods the loop's thread can take a whole core, as it
// needs to carry them. Two 1G floods, beside main's build in the same
// rounds: with iperf3's buffers 0.28-0.32 of the ceiling each way
// against 0.18-0.21, with -w 4M 0.32-0.42 against 0.20-0.33, 0.1-5.6 k
// frames dropped late against 110-165 k (docs/benchmarks.md).
const DefaultShortNice = -10

// shortAfter is how long after a read last left frames in a TAP with the
// stage full, the loop behind, it counts as short of CPU (isShort).
const shortAfter = 50 * time.Millisecond

// DefaultLinger is Loop.Linger unless changed.
const DefaultLinger = 200 * time.Microsecond

// DefaultIdleSpin is Loop.IdleSpin unless changed: request/response
// traffic and pings a few milliseconds apart find the loop awake.
const DefaultIdleSpin = 20 * time.Millisecond

// idleAfter is how long the loop, with nothing scheduled, polls without
// yielding after the last frame before it polls idle (see IdleSpin):
// request/response traffic and floods leave gaps shorter than this (a
// TCP_RR transaction through a 100M switch takes ~75 µs here), so their
// polls cost no sched_yield, and what they use counts as the emulator's.
const idleAfter = 200 * time.Microsecond

// tap is a TAP device attached to a host NIC model.
type tap struct {
	fd       int
	port     *emulator.HostPort
	readable bool                  // frames may be waiting: epoll is edge-triggered
	queued   bool                  // in Loop.backlog
	staged   stage                 // frames read ahead of the NIC's ring (stage.go)
	input    func(*emulator.Frame) // the NIC's Input, or InputSuper
	room     func() bool           // the NIC's CanAccept
	// bucket is the host's token bucket in front of the TAP, which dates
	// frames back (stage.dateBack), from bucketFrom on; nil: none known.
	bucket     *bucket
	bucketFrom time.Duration
	writeErrs  uint64
	close      func() error
	// vnet: the TAP has IFF_VNET_HDR and offloads on; every frame read
	// or written carries an emulator.VNetHdr first.
	vnet      bool
	gsoErrors uint64             // super-frames that could not be cut, dropped
	gro       emulator.Coalescer // frames released this pass, joined
	mod       *moderator         // other frames under load, batched
	write     func(h emulator.VNetHdr, data []byte)
	// lateDropped are the wire frames dropped at release to this TAP,
	// later than ReleaseBound: counted per port, since a flooded frame's
	// copies are dropped at each port it was late for.
	lateDropped uint64
	supers      uint64      // super-frames read (more than one wire frame)
	superSegs   uint64      // the wire frames they became
	last        lastRelease // its last release, for the added latency (added.go)
}

// NewLoop returns a loop driving s; call Run to start it.
func NewLoop(s *sched.Scheduler) (*Loop, error) {
	l := &Loop{Spin: DefaultSpin, Linger: DefaultLinger, IdleSpin: DefaultIdleSpin, LateBound: DefaultLateBound, ReleaseBound: DefaultReleaseBound, StallBound: DefaultStallBound, ShortNice: DefaultShortNice, s: s, start: time.Now(), taps: map[int32]*tap{}}
	var err error
	if l.epfd, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC); err != nil {
		return nil, err
	}
	if l.tfd, err = unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC); err != nil {
		return nil, err
	}
	if l.efd, err = unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC); err != nil {
		return nil, err
	}
	for _, fd := range []int{l.tfd, l.efd} {
		if err := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)}); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// Now returns the loop's wall time as model time.
func (l *Loop) Now() time.Duration { return time.Since(l.start) }

// Attach connects a TAP file descriptor (non-blocking) to a host port: the
// port's Sink writes to the TAP, and the loop reads the TAP whenever its
// stage or the NIC ring has room. closeFn is called when the loop closes. Call before Run.
func (l *Loop) Attach(fd int, port *emulator.HostPort, closeFn func() error) error {
	t := &tap{fd: fd, port: port, close: closeFn, room: port.CanAccept}
	t.input = func(f *emulator.Frame) { port.Input(f) }
	write := func(f *emulator.Frame) {
		if !l.inTime(t) {
			f.Release()
			return
		}
		if _, err := writeRaw(fd, f.Data); err != nil {
			t.writeErrs++
		}
		l.handedOver(t)
		f.Release() // written: the loop's reader may reuse it
	}
	t.mod = newModerator(l.s, write)
	port.Sink = func(f *emulator.Frame) {
		if !l.released(t, 1) {
			f.Release()
			return
		}
		if t.mod.sink(f) {
			return
		}
		write(f)
	}
	t.staged.admit = l.s.NewTimer(func() { l.read(t) })
	port.SetOnSpace(func() {
		if (t.readable || t.staged.len() > 0) && !t.staged.admit.Pending() {
			t.staged.admit.Reset(l.s.Now()) // as the event that made room
		}
	})
	l.taps[int32(fd)] = t
	return unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLET, Fd: int32(fd)})
}

// Watch has the loop call read, on its goroutine, whenever fd is readable
// (level-triggered: read takes what it can, without blocking), in the
// pass that finds it so: a split lab's cut socket is read as a TAP is,
// with no other thread to wake. Call before Run.
func (l *Loop) Watch(fd int, read func()) error {
	if l.watched == nil {
		l.watched = map[int32]func(){}
	}
	l.watched[int32(fd)] = read
	return unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)})
}

// tapOf returns port's TAP, or nil.
func (l *Loop) tapOf(port *emulator.HostPort) *tap {
	for _, t := range l.taps {
		if t.port == port {
			return t
		}
	}
	return nil
}

// setBucket tells the loop the token bucket in front of port's TAP (nil:
// none, or about to change), from now on; a super-frame TAP's is not used.
// Call it on the loop goroutine, or before Run.
func (l *Loop) setBucket(port *emulator.HostPort, b *bucket) {
	if t := l.tapOf(port); t != nil && !t.vnet {
		t.bucket, t.bucketFrom = b, l.Now()
	}
}

// AttachVNet is Attach for a TAP opened with IFF_VNET_HDR and offloads:
// a super-frame read from it enters the NIC model whole, as a train
// (emulator.HostPort.InputSuper); a TCP super-frame's segments that reach
// the host as a train are written as one super-frame (HostPort.
// SetSinkTrain), and other frames delivered to the host are joined by GRO
// or written with a header that says they need nothing done (their
// checksums are complete).
func (l *Loop) AttachVNet(fd int, port *emulator.HostPort, closeFn func() error) error {
	if err := l.Attach(fd, port, closeFn); err != nil {
		return err
	}
	t := l.taps[int32(fd)]
	t.vnet = true
	t.input = port.InputSuper
	var hdr [emulator.VNetHdrLen]byte
	var iov iovecs
	t.write = func(h emulator.VNetHdr, data []byte) {
		h.Put(hdr[:])
		iov.set(hdr[:], data)
		if _, err := writevRaw(fd, &iov); err != nil {
			t.writeErrs++
		}
		iov.clear() // the frame goes back to the pool
		l.handedOver(t)
	}
	hold := l.s.NewTimer(func() { t.gro.Flush(t.write) })
	// A TCP super-frame's segments that crossed the models as a train are
	// written as one super-frame, as GRO would have joined them, uncut.
	var head [256]byte
	var train iovecs
	port.SetSinkTrain(l.s, GROHold, func(f *emulator.Frame, first, n int) {
		if !l.released(t, n) {
			if first+n == f.GSO.Segs {
				f.Release()
			}
			return
		}
		t.mod.tcp()
		t.gro.Flush(t.write) // what they hold came first
		h, hd, payload := emulator.SuperRange(head[:], f.Data, f.GSO, first, n)
		h.Put(hdr[:])
		train.set(hdr[:], hd, payload)
		if _, err := writevRaw(fd, &train); err != nil {
			t.writeErrs++
		}
		train.clear()
		l.handedOver(t)
		if first+n == f.GSO.Segs {
			f.Release() // its last segments written
		}
	})
	t.mod = newModerator(l.s, func(f *emulator.Frame) {
		if l.inTime(t) {
			t.write(emulator.VNetHdr{}, f.Data) // complete, nothing to do
		}
		f.Release()
	})
	port.Sink = func(f *emulator.Frame) {
		if !l.released(t, max(f.GSO.Segs, 1)) {
			f.Release()
			return
		}
		if t.mod.sink(f) {
			return
		}
		t.gro.Add(f.Data, t.write) // copies what it keeps
		f.Release()
		if t.gro.Holding() && !hold.Pending() {
			hold.Reset(l.s.Now() + GROHold)
		}
	}
	return nil
}

// released notes a release to a TAP of segs wire frames: whether it
// ended a quiet spell (see Linger), and how late the pass began. It
// reports false, counting the frames, when the bound is on and the clock
// read now shows the release later than ReleaseBound: the caller drops
// them. With no bound the clock is not read here, once per frame.
func (l *Loop) released(t *tap, segs int) bool {
	at := l.s.Now()
	if b := l.releaseBound(); b > 0 && l.Now()-at > b {
		t.lateDropped += uint64(segs)
		return false
	}
	if l.now-l.lastBusy > time.Millisecond {
		l.lingerUntil = l.now + l.Linger
	}
	l.lastBusy = l.now
	l.added.note(t, at)
	l.Wake.Record(l.now - at)
	return true
}

// lateBound is the entry bound now (stage.enter): shortLate for a loop
// short of CPU (see releaseBound), LateBound for one that keeps up.
func (l *Loop) lateBound() time.Duration {
	if l.isShort() {
		return min(l.LateBound, shortLate)
	}
	return l.LateBound
}

// isShort reports whether the loop is short of CPU: within shortAfter of
// a read that left frames in a TAP with its stage full (4,096 frames or 4
// MiB, 33 ms at 1G) while an event of the model waited more than shortLate
// (behind). Both are needed. Two 1G floods keep the stages full and the
// loop behind. A host paced by its token bucket never fills its stage, so
// a 1G TCP stream that a loaded machine stalls for 5-15 ms does not count
// (judged by how far behind the model ran alone, it lost 96-174 frames at
// the release bound in 6 s). A host that offers more than its path takes
// fills its stage in time: gns3-mpls's VM sends 196 Mbit/s into an ATM
// core that takes 129, the stage stays full, and the loop polls it ~50,000
// times a second in time; judged by the stage alone it was short for
// whole points and dropped thousands of frames a few milliseconds late
// (the model's queues are the place for that excess, not the bound).
func (l *Loop) isShort() bool { return l.short && l.now-l.shortFrom < shortAfter }

// releaseBound is the bound on release lateness now: ReleaseBound for a
// loop short of CPU, or keeping up only at its raised priority (ShortNice),
// StallBound for one that keeps up.
func (l *Loop) releaseBound() time.Duration {
	if l.isShort() || l.raised {
		return l.ReleaseBound
	}
	return l.StallBound
}

// inTime reports whether a frame the moderator hands to t's host now is
// still within the release bound of the model time of its write; if not it
// counts the frame, which the caller drops. The moderator writes up to
// NAPIBudget frames back to back, each ~5 µs under a flood, and a loop
// that loses its core among them would hand the last ones over later than
// the bound released checked at: under two 1G floods the p99 read 5.1-6.2
// ms with a 5 ms bound.
func (l *Loop) inTime(t *tap) bool {
	if b := l.releaseBound(); b > 0 && l.Now()-l.s.Now() > b {
		t.lateDropped++
		return false
	}
	return true
}

// handedOver records in Lateness how late a TAP write that just returned
// was against the model time it was made at: the clock is read as each
// write ends, so the write (in which the receiving host's kernel takes
// the frame and wakes its reader) counts, and a loop that loses its core
// later in the pass does not make a frame it already handed over late.
func (l *Loop) handedOver(t *tap) {
	late := l.Now() - l.s.Now()
	l.Lateness.Record(late)
	l.added.handed(t, late)
}

// Do runs f on the loop goroutine, soon. It is safe from any goroutine.
func (l *Loop) Do(f func()) {
	l.mu.Lock()
	l.calls = append(l.calls, f)
	l.mu.Unlock()
	var one = [8]byte{1}
	unix.Write(l.efd, one[:])
}

// Query runs f on the loop goroutine and waits for it, or for ctx.
func (l *Loop) Query(ctx context.Context, f func()) error {
	done := make(chan struct{})
	l.Do(func() { f(); close(done) })
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Run drives the scheduler until ctx is cancelled. It locks its OS thread:
// the loop's waits are blocking syscalls, not the Go netpoller.
//
// At most passEvents events run between two polls of epoll, so that when
// the model needs more CPU than the wall clock gives (a broadcast storm in
// a loop of switches) the loop still comes back to epoll and serves
// signals, stats and captures; the model then runs behind the wall clock,
// which its lateness shows.
func (l *Loop) Run(ctx context.Context) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	stop := context.AfterFunc(ctx, func() { l.Do(func() { l.stopped = true }) })
	defer stop()
	l.cpuStart, l.wallStart = processCPU(), time.Now()
	if l.setNice == nil {
		tid := unix.Gettid()
		l.setNice = func(nice int) error { return unix.Setpriority(unix.PRIO_PROCESS, tid, nice) }
		// getpriority's system call returns 20 - nice.
		if p, err := unix.Getpriority(unix.PRIO_PROCESS, tid); err == nil {
			l.baseNice = 20 - p
		}
	}
	defer l.rest()
	events := make([]unix.EpollEvent, 64)
	n, budget := 0, passEvents
	// The loop sleeps keeping its P (block) where another P serves the
	// rest of the program.
	keepP := runtime.GOMAXPROCS(0) > 1
	now := l.Now()
	counters := openCounters() // on the locked thread: its schedstat
	defer counters.close()
	l.stall.start(now, counters.read)
	for !l.stopped {
		// The pass reads the TAPs epoll named before it runs what is due,
		// so that frames that came while the loop was off its core are
		// staged (and dated back) before the model catches up past them.
		// Calls see the model caught up.
		l.now = now
		calls := false
		l.readBacklog()
		for _, ev := range events[:n] {
			switch int(ev.Fd) {
			case l.tfd:
				var b [8]byte
				unix.Read(l.tfd, b[:])
			case l.efd:
				var b [8]byte
				unix.Read(l.efd, b[:])
				calls = true
			default:
				if t := l.taps[ev.Fd]; t != nil {
					t.readable = true
					l.read(t)
				} else if read := l.watched[ev.Fd]; read != nil {
					read()
				}
			}
		}
		n = 0
		l.runDue(&budget)
		if calls {
			l.runCalls()
			l.runDue(&budget)
		}
		l.prioritize()
		now = l.Now() // ends this pass and begins the next
		l.stall.clock(now, l.yielded, false)
		next, scheduled := l.s.Next()
		if l.stopped {
			break
		}
		if (scheduled && next <= now || len(l.backlog) > 0) && budget > 0 {
			if now-l.now < longPass {
				continue // due already: run it without polling
			}
			// A long pass: the loop lost its core, or worked long. It
			// polls without waiting (the event is due), and the next pass
			// reads what came meanwhile first (see above).
			l.longPolls++
		}
		timeout, quiet, share := -1, false, false
		if budget <= 0 || len(l.backlog) > 0 {
			timeout = 0 // behind, or frames left to read: serve epoll, then go on
		} else if scheduled {
			// One early sleep per event, then spin: a second sleep after
			// waking early would wake late (frames out of a 5 ms delay were
			// released 41 µs late at the median; now 1-2 µs).
			//
			// Raised, the loop spins yielding its core after each poll
			// that finds nothing: under two 1G floods it polled ~1.8
			// times a frame caught up, a quarter of its samples, on a core
			// its hosts needed to send the frames it waited for. A yield
			// costs nothing when no thread wants the core, and the loop,
			// at ShortNice, comes back soon. (Sleeping until the event,
			// woken by a frame, was worse: a woken thread waited for the
			// tick behind the hosts', 4-7 ms, and dropped late.)
			if wait := next - now; wait <= l.Spin || next == l.sleptFor && wait <= l.wakeAt {
				timeout, share = 0, l.raised
			} else {
				l.wakeAt = earlyWake(wait, l.Spin)
				l.arm(wait - l.wakeAt)
				l.sleptFor = next
			}
		} else if now < l.lingerUntil {
			timeout = 0
		} else if since := now - l.lastBusy; since < l.IdleSpin && !l.raised { // raised, its polls would take the hosts' core
			timeout, quiet = 0, since >= idleAfter
		}
		if timeout != 0 {
			l.setIdle(false)
			if !scheduled && now-l.lastBusy >= l.IdleSpin {
				l.rest()
			}
		}
		var err error
		switch {
		case timeout == 0:
			n, err = poll(l.epfd, events)
		case keepP:
			n, err = block(l.epfd, events, waitTimeout(timeout))
		default:
			n, err = unix.EpollWait(l.epfd, events, timeout)
		}
		l.polls++
		yielded := false
		if n > 0 {
			l.setIdle(false)
		} else if quiet {
			// Idle only once a poll found nothing: a frame written while
			// the loop's thread was off its core (a VM's stolen time) finds
			// it busy, not yielding.
			l.setIdle(true)
			unix.Syscall(unix.SYS_SCHED_YIELD, 0, 0, 0)
			yielded = true
		} else if share {
			unix.RawSyscall(unix.SYS_SCHED_YIELD, 0, 0, 0)
			yielded = true
			l.shared++
		}
		if err != nil && !errors.Is(err, syscall.EINTR) {
			return err
		}
		n, budget = max(n, 0), passEvents
		if timeout != 0 || n > 0 {
			// It slept, or frames came: a clock read before the poll
			// would stamp them earlier than they were written when the
			// thread lost its core between the two (a sched_yield, a
			// preemption), and the model would release them early.
			now = l.Now()
			l.stall.clock(now, timeout != 0 || yielded, n > 0)
		}
		l.yielded = yielded && n <= 0
	}
	return nil
}

// prioritize raises the loop thread to ShortNice when the loop has become
// short of CPU, with frames coming; it stays raised, with ReleaseBound
// its release bound, until the loop sleeps with nothing scheduled after
// IdleSpin without a frame (the traffic stopped: rest). Lowered as soon
// as the loop kept up (isShort, 50 ms), it lost its core to the hosts,
// fell behind and was raised again, 28 times in a 6-s run of two floods,
// and what a stall delayed meanwhile went out up to StallBound late
// (release lateness p99 21 ms); lowered a second after, p99 8-17 ms;
// lowered whenever it slept, towards an event too, 29 times. A raise the
// system refuses (no CAP_SYS_NICE) is not tried again. A system call only
// at each change.
func (l *Loop) prioritize() {
	if l.isShort() && !l.raised && !l.noRaise && l.ShortNice < l.baseNice && l.now-l.lastBusy < l.IdleSpin {
		if err := l.setNice(l.ShortNice); err != nil {
			l.noRaise = true
			return
		}
		l.raised = true
		l.raises++
	}
}

// rest lowers the loop thread back to its own priority before it sleeps.
func (l *Loop) rest() {
	if l.raised {
		l.setNice(l.baseNice)
		l.raised = false
	}
}

// poll asks epoll what is ready without waiting, as a raw system call: one
// that cannot block needs none of the Go scheduler's entry and exit around
// it, which took 15 % of a spinning loop's CPU in `perf record` (a poll:
// 212 ns through unix.EpollWait, 154 ns raw, BenchmarkPoll), and the
// loop's P is never seen in a syscall, so sysmon never hands it away.
func poll(epfd int, events []unix.EpollEvent) (int, error) {
	r, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(epfd), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), 0, 0, 0)
	if e != 0 {
		return -1, e
	}
	return int(r), nil
}

// block is epoll_wait as a raw system call, for up to ms milliseconds:
// the loop's thread sleeps keeping its P. Through unix.EpollWait, Go's
// runtime handed the P away while the loop slept and took one back when
// it woke (waking its monitor thread on the way): a frame after a second
// of quiet was released 300-420 µs after a veth pair would have carried
// it, 90-120 µs with this (docs/how-it-works.md). The runtime still stops
// the loop when it must (a collection): its signal ends the wait with
// EINTR, and the loop's next call yields; waitTimeout bounds a wait
// even so.
func block(epfd int, events []unix.EpollEvent, ms int) (int, error) {
	r, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(epfd), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), uintptr(ms), 0, 0)
	if e != 0 {
		return -1, e
	}
	return int(r), nil
}

// maxWait is the longest the loop sleeps keeping its P (block) before it
// comes back to Go code, where the runtime can stop it without a signal.
const maxWait = 50 // milliseconds

// waitTimeout is epoll's timeout for a wait that keeps the P: timeout
// (milliseconds, -1 for none) at most maxWait. With nothing scheduled
// the loop then wakes 20 times a second, finds nothing and sleeps again.
func waitTimeout(timeout int) int {
	if timeout < 0 || timeout > maxWait {
		return maxWait
	}
	return timeout
}

// setIdle notes when the loop begins and ends polling idle, whose CPU
// time Stats reports apart from the emulator's.
func (l *Loop) setIdle(idle bool) {
	if idle == l.idle {
		return
	}
	l.idle = idle
	if idle {
		l.idleSpells++
		l.idleFrom = threadCPU()
	} else {
		l.idleCPU += threadCPU() - l.idleFrom
	}
}

// longPass is how long a pass may take before the loop asks epoll,
// rather than going straight on to the next due event: a host's token
// bucket holds at least 2 ms of line rate, so frames that came during a
// shorter pass cannot be dated back (stage.dateBack).
const longPass = time.Millisecond

// passEvents is the most events the loop runs before it serves epoll
// again: ~1 ms of work at a microsecond an event.
const passEvents = 1000

// runDue runs the events due at the pass's clock, at most *budget of
// them.
func (l *Loop) runDue(budget *int) {
	ran, _ := l.s.RunDue(l.now, *budget)
	*budget -= ran
}

// earlyWake is how long before an event the loop asks to be woken, then
// spins: a long sleep on an idle VM wakes hundreds of microseconds late, so
// the margin grows with the sleep (an eighth of it, at most 1 ms).
func earlyWake(wait, spin time.Duration) time.Duration {
	return max(spin, min(wait/8, time.Millisecond))
}

func (l *Loop) arm(wait time.Duration) {
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(int64(wait))}
	unix.TimerfdSettime(l.tfd, 0, &spec, nil)
}

func (l *Loop) runCalls() {
	l.mu.Lock()
	calls := l.calls
	l.calls = nil
	l.mu.Unlock()
	for _, f := range calls {
		f()
	}
}

// read takes frames from a TAP into its stage while the stage has room,
// then moves staged frames into the NIC ring while the ring has room (see
// stage). When both are full it leaves the rest in the kernel's queues;
// the NIC's OnSpace brings it back. Only a read that finds the TAP empty
// clears readable, as edge-triggered epoll requires. A loop behind its
// model by more than LateBound reads at most readBatch frames (see
// behind).
func (l *Loop) read(t *tap) {
	batch := l.behind()
	for {
		n := 0 // read in this go
		for t.readable && !t.staged.full() {
			if batch && n == readBatch {
				if !t.queued {
					t.queued = true
					l.backlog = append(l.backlog, t)
				}
				break
			}
			f, short, again := l.rd.read(t.fd, t.vnet)
			if f == nil {
				t.readable = again
				break
			}
			l.lastBusy = l.now
			l.nextID++
			f.ID, f.Born = l.nextID, l.now
			if t.vnet && !l.planSuper(t, f, short) {
				continue
			}
			t.staged.push(f)
			n++
		}
		if t.readable && t.staged.full() && l.behind() { // more waits than the stage holds, and the model lags
			l.short, l.shortFrom = true, l.now
		}
		if b := t.bucket; b != nil && n*b.frame > b.burst { // else none can date back
			now, floor := l.Now(), max(l.s.Now(), t.bucketFrom)
			if b := l.lateBound(); b > 0 { // not so far back that enter must hold them
				floor = max(floor, now-b)
			}
			t.staged.dateBack(n, now, floor, b)
		}
		if !l.admit(t) || !t.readable || batch {
			return
		}
	}
}

// readBatch is the most frames a loop that is behind reads from one TAP
// in a go, as NAPI's budget: a TAP with more waiting is read again in the
// next pass, after the events due meanwhile, so that reading a flood does
// not hold back the releases due. Under two 1G floods each read took all
// the stage had room for, up to 4,096 frames, before the pass released
// anything (load average 1.8-2.9: 0.23 of the ceiling each way and 106,873
// frames dropped late at a 5 ms release bound, against 0.38-0.40 and
// 39,700 read in batches).
const readBatch = 64

// behind reports whether an event of the model waits more than shortLate
// after its time: frames
// read now would be held back (stage.enter), so it reads in batches and
// releases in between. A loop in time (after a quiet spell too) reads all
// a stall left in one go, to date it back as one batch (stage.dateBack).
func (l *Loop) behind() bool {
	next, ok := l.s.Next()
	return l.LateBound > 0 && ok && l.Now()-next > shortLate
}

// readBacklog reads again the TAPs whose last read stopped at readBatch.
func (l *Loop) readBacklog() {
	if len(l.backlog) == 0 {
		return
	}
	b := l.backlog
	l.backlog = l.spare[:0]
	for _, t := range b {
		t.queued = false
		l.read(t)
	}
	l.spare = b[:0]
}

// admit moves staged frames into the NIC ring, each at the model time the
// ring had room or at the pass that read it, whichever is later (no more
// than LateBound behind the pass: stage.enter), and
// reports whether the stage has room for more.
func (l *Loop) admit(t *tap) bool {
	if at, wait := t.staged.enter(l.s.Now(), l.now, l.lateBound(), t.room, t.input); wait {
		t.staged.admit.Reset(at)
	}
	return !t.staged.full()
}

var errShortVNet = errors.New("read shorter than its virtio_net_hdr")

// planSuper decodes the VNetHdr read with f and plans its cut: a
// super-frame travels the models as a train and is cut into wire frames
// only where one must exist (emulator.HostPort.InputSuper). One that
// cannot be cut is dropped, counted, and planSuper returns false.
func (l *Loop) planSuper(t *tap, f *emulator.Frame, short bool) bool {
	h, err := emulator.DecodeVNetHdr(l.rd.hdr[:])
	if short {
		err = errShortVNet
	}
	var sp emulator.Super
	if err == nil {
		sp, err = emulator.PlanSuper(f.Data, h) // a partial checksum is completed in place
	}
	if err != nil {
		t.gsoErrors++
		f.Release()
		return false
	}
	if sp.Segs > 1 {
		t.supers++
		t.superSegs += uint64(sp.Segs)
	}
	f.GSO = sp
	return true
}

// Stats returns the loop's health; call it on the loop goroutine.
func (l *Loop) Stats() control.LoopStats {
	st := control.LoopStats{Uptime: l.Now(), Lateness: l.Lateness.Summary(), Added: l.added.stats(), Wake: l.Wake.Summary(), VethRTT: l.VethRTT}
	st.Stalls, st.StallCount = l.stall.list(), l.stall.count
	st.GCCycles, st.Allocated = heap()
	st.IdleSpin = l.idleCPU
	if l.idle {
		st.IdleSpin += threadCPU() - l.idleFrom
	}
	st.CPUTime = processCPU() - l.cpuStart - st.IdleSpin
	if wall := time.Since(l.wallStart); wall > 0 {
		st.CPU = float64(st.CPUTime) / float64(wall)
	}
	for _, t := range l.taps {
		st.WriteErrors += t.writeErrs
		st.GSOErrors += t.gsoErrors
		st.LateHeld += t.staged.late
		st.LateDropped += t.lateDropped
		st.SuperFrames += t.supers
		st.SuperSegments += t.superSegs
	}
	st.PriorityRaised = l.raises
	return st
}

// LateDroppedAt returns the wire frames dropped at release to port's TAP,
// later than ReleaseBound (0 for a port without one); call it on the loop
// goroutine. LoopStats.LateDropped sums them over the ports, so a frame
// flooded to several hosts counts once at each that it was late for.
func (l *Loop) LateDroppedAt(port *emulator.HostPort) uint64 {
	if t := l.tapOf(port); t != nil {
		return t.lateDropped
	}
	return 0
}

// Close releases the loop's descriptors and every attached TAP.
func (l *Loop) Close() error {
	var errs []error
	for _, t := range l.taps {
		if t.close != nil {
			errs = append(errs, t.close())
		}
	}
	for _, fd := range []int{l.epfd, l.tfd, l.efd} {
		unix.Close(fd)
	}
	return errors.Join(errs...)
}

func threadCPU() time.Duration {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts)
	return time.Duration(ts.Nano())
}

func processCPU() time.Duration {
	var ru unix.Rusage
	unix.Getrusage(unix.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
