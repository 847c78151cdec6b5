// Package window runs the parts of a split lab, each on a scheduler of
// its own, as one simulation: conservative windows of the lookahead (the
// smallest delay of the links cut between parts). Nothing a part does at
// model time t can reach another part before t + the lookahead, so in a
// window [T, T+lookahead) every part runs alone, on a goroutine of its
// own; what crosses a cut during the window (Post) is handed to its
// part's scheduler at the window's end, at its arrival time and stamped
// with its departure (sched.AtFrom), so that every part runs its events in
// the order one scheduler running the whole lab would (docs/split.md).
package window

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/atmlab/atmlab/emulator/sched"
)

// Group is the parts' schedulers run in windows of Lookahead.
type Group struct {
	Parts     []*sched.Scheduler
	Lookahead time.Duration

	// out[src][dst] is what part src posted to part dst in this window:
	// only src's goroutine appends to it, only the barrier drains it.
	out  [][][]post
	edge []time.Duration // each part's current window end: nothing may arrive before it

	workers []*worker // parts 1.. (each)
}

// post is an event handed from one part to another.
type post struct {
	at, from time.Duration
	origin   uint32
	f        func()
}

// New returns a group of the parts' schedulers (each at the same model
// time) run in windows of lookahead, which must be above 0.
func New(parts []*sched.Scheduler, lookahead time.Duration) *Group {
	if lookahead <= 0 {
		panic("window: a lookahead above 0 is needed")
	}
	g := &Group{Parts: parts, Lookahead: lookahead, out: make([][][]post, len(parts)), edge: make([]time.Duration, len(parts))}
	for i := range parts {
		g.out[i] = make([][]post, len(parts))
	}
	return g
}

// Post hands f from part src to part dst, to run at model time at there,
// as an event scheduled at from (the frame's departure, the current time
// of src) by cut origin (above 0). It is called on src's goroutine, from
// one of src's events; at must be at least the end of src's window (a
// frame's departure plus the cut's delay is): anything earlier would be
// too late for dst, and is a fault of the lookahead, which panics.
func (g *Group) Post(src, dst int, at, from time.Duration, origin uint32, f func()) {
	if at < g.edge[src] {
		panic(fmt.Sprintf("window: part %d posted an event at %v to part %d inside the window ending at %v (the lookahead %v is more than the cut's delay)", src, at, dst, g.edge[src], g.Lookahead))
	}
	g.out[src][dst] = append(g.out[src][dst], post{at: at, from: from, origin: origin, f: f})
}

// deliver hands every post to its part's scheduler, by sender in part
// order, each sender's in the order posted.
func (g *Group) deliver() {
	for src := range g.out {
		for dst, ps := range g.out[src] {
			for _, p := range ps {
				g.Parts[dst].AtFrom(p.at, p.from, p.origin, p.f)
			}
			clear(ps)
			g.out[src][dst] = ps[:0]
		}
	}
}

// worker runs one part's windows on a goroutine of its own (part 0's
// run on the caller's). Handing a window over and waiting for it spin
// rather than sleep: waking a sleeping thread took 50-100 µs on the
// machines measured, longer than a window's work, so a barrier of
// channels ran the parts one after the other. A worker that has had
// nothing for spinFor sleeps until it is handed a window.
type worker struct {
	gen, done atomic.Uint64 // windows handed, windows finished
	sleeping  atomic.Bool
	wake      chan struct{}
	job       func()
	fault     any // what job panicked with
	quit      atomic.Bool
}

// spinFor is how long a worker waits for its next window before it sleeps.
const spinFor = time.Millisecond

// yieldEvery is how many times a waiting part reads the flag it waits on
// between two runtime.Gosched calls (a few microseconds). Gosched on
// every read took the runtime's global lock each time and put the
// waiting goroutine on the global run queue, a lock the other part's
// thread takes too: a third of a split point's CPU in a profile, and
// 5-25 % more wall time than now. It yields at all so that a goroutine
// readied on the waiting part's thread still runs.
const yieldEvery = 1024

// pause is what a wait does after its nth read of the flag.
func pause(n int) {
	if n%yieldEvery == 0 {
		runtime.Gosched()
	}
}

func (w *worker) loop() {
	var seen uint64
	for {
		deadline := time.Now().Add(spinFor)
		for n := 1; w.gen.Load() == seen; n++ {
			if n%yieldEvery != 0 {
				continue
			}
			if w.quit.Load() {
				return
			}
			if time.Now().After(deadline) {
				w.sleeping.Store(true)
				if w.gen.Load() == seen && !w.quit.Load() {
					<-w.wake
				}
				w.sleeping.Store(false)
				deadline, n = time.Now().Add(spinFor), 0
				continue
			}
			pause(n)
		}
		seen = w.gen.Load()
		w.fault = run(w.job)
		w.done.Store(seen)
	}
}

// start starts a worker for every part after the first.
func (g *Group) start() {
	if g.workers != nil {
		return
	}
	for range g.Parts[1:] {
		w := &worker{wake: make(chan struct{}, 1)}
		g.workers = append(g.workers, w)
		go w.loop()
	}
}

// run calls f and returns what it panicked with, nil if it did not.
func run(f func()) (p any) {
	defer func() { p = recover() }()
	f()
	return nil
}

// Close ends the parts' goroutines.
func (g *Group) Close() {
	for _, w := range g.workers {
		w.quit.Store(true)
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
	g.workers = nil
}

// each runs f(i) for every part i at once, part 0 on the caller's
// goroutine, and returns when all have. A part's panic is raised again on
// the caller's goroutine.
func (g *Group) each(f func(i int)) {
	g.start()
	for i, w := range g.workers {
		w.job = func() { f(i + 1) }
		w.gen.Add(1)
		if w.sleeping.Load() {
			select {
			case w.wake <- struct{}{}:
			default:
			}
		}
	}
	fault := run(func() { f(0) })
	for _, w := range g.workers {
		for n := 1; w.done.Load() != w.gen.Load(); n++ {
			pause(n)
		}
		if w.fault != nil && fault == nil {
			fault = w.fault
		}
	}
	if fault != nil {
		panic(fault)
	}
}

// Now is the model time every part has reached: the smallest of their
// clocks.
func (g *Group) Now() time.Duration {
	now := g.Parts[0].Now()
	for _, s := range g.Parts[1:] {
		now = min(now, s.Now())
	}
	return now
}

// idle reports whether no part has an event pending and nothing is posted.
func (g *Group) idle() bool {
	for i, s := range g.Parts {
		if s.Pending() > 0 {
			return false
		}
		for _, ps := range g.out[i] {
			if len(ps) > 0 {
				return false
			}
		}
	}
	return true
}

// RunUntil runs every part's events due at or before t, in windows of the
// lookahead, and leaves every clock at t, as sched.Scheduler.RunUntil does
// one scheduler's.
func (g *Group) RunUntil(t time.Duration) {
	for now := g.Now(); now < t; now = g.Now() {
		end := min(now+g.Lookahead, t)
		g.window(func(i int) { g.Parts[i].RunBefore(end) }, end)
	}
	// Events at t itself: what they post arrives after t.
	g.window(func(i int) { g.Parts[i].RunUntil(t) }, t)
}

// window runs one window ending at end on every part at once, then hands
// on what crossed.
func (g *Group) window(run func(i int), end time.Duration) {
	for i := range g.edge {
		g.edge[i] = end
	}
	g.each(run)
	g.deliver()
}

// RunLead runs the parts until done reports true after an event of part
// lead, or until the lead's clock reaches limit, or until nothing is left
// to run, and returns whether done did; done is called on the lead's
// goroutine. The lead runs one window ahead of the others in windows of
// half the lookahead (what either sends in a window arrives two windows
// later), so that when it is done at t the others have not passed t; they
// then run their events due before t and leave their clocks there. So a
// test that runs in one part ends as it would in one scheduler, with the
// other parts (a background load) at the same model time. Only an event
// of another part at the very nanosecond the test ends has not run,
// where in one scheduler it might have.
func (g *Group) RunLead(lead int, done func() bool, limit time.Duration) bool {
	ls := g.Parts[lead]
	if len(g.Parts) == 1 {
		for !done() && ls.Now() < limit && ls.Step() {
		}
		return done()
	}
	half := max(g.Lookahead/2, 1)
	base := g.Now()
	at := func(k int) time.Duration { return base + time.Duration(k)*half }
	going := true
	stepLead := func(end time.Duration) { // going false once done or at the limit
		for {
			if done() || ls.Now() >= limit {
				going = false
				return
			}
			if next, ok := ls.Next(); !ok || next >= end {
				return
			}
			ls.Step()
		}
	}
	g.edge[lead] = at(1)
	stepLead(at(1))
	g.deliver()
	for k := 1; going; k++ {
		leadEnd, restEnd := at(k+1), at(k)
		if g.idle() || restEnd >= limit {
			break
		}
		for i := range g.edge {
			g.edge[i] = restEnd
		}
		g.edge[lead] = leadEnd
		g.each(func(i int) {
			if i == lead {
				stepLead(leadEnd)
				return
			}
			g.Parts[i].RunBefore(restEnd)
		})
		g.deliver()
	}
	// The others catch up with the lead, to where it stopped.
	stop := ls.Now()
	for i := range g.edge {
		g.edge[i] = stop
	}
	g.each(func(i int) {
		if i != lead && g.Parts[i].Now() < stop {
			g.Parts[i].RunBefore(stop)
		}
	})
	g.deliver()
	return done()
}
