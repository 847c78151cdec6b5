// Package parallel runs the parts of a split lab, each on a scheduler of
// its own and a goroutine (a core) of its own, as one conservative
// parallel simulation with the lookahead (the smallest delay of the links
// cut between parts): nothing a part does at model time t reaches another
// part before t + the lookahead. The parts do not meet at a barrier. Each
// says, as it goes, its safe time (it will run no event before it again,
// and has posted all that its earlier events sent), and runs its next
// event while that is before every other part's safe time plus the
// lookahead. What crosses a cut (Post) waits in the far part's inbox until
// that part takes it into its scheduler, at its arrival time and stamped
// with its departure (sched.AtFrom), before it runs anything that late;
// so every part runs its events in the order one scheduler running the
// whole lab would (docs/split.md), however far apart the parts ran.
package parallel

import (
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/atmlab/atmlab/emulator/sched"
)

// never is a safe time that holds for good: a part that will run and post
// nothing more in this run.
const never = time.Duration(math.MaxInt64)

// Group is the parts' schedulers, run with Lookahead.
type Group struct {
	Parts     []*sched.Scheduler
	Lookahead time.Duration

	parts []part
	// stop is where a test's lead stopped (RunLead), stored before the
	// lead's safe time goes to never.
	stop  atomic.Int64
	fault atomic.Pointer[faulted] // the first part's panic: every part stops
	marks []uint64                // the lead's look at the others' idle marks
}

// part is one part's side of the exchange. Only its own goroutine writes
// safe, idle and its inbox's drain; any part's appends to inbox.
type part struct {
	safe     atomic.Int64 // its safe time, as it last said it
	idle     atomic.Uint64
	epoch    uint64 // the times it took posts in: idle says after which it idled
	sleeping atomic.Bool
	wake     chan struct{}
	seen     []int64 // the others' safe times as it last read them (horizon)
	mu       sync.Mutex
	inbox    []post
	spare    []post
	_        [64]byte // each part's words on a cache line of their own
}

// post is an event handed from one part to another.
type post struct {
	at, from time.Duration
	origin   uint32
	f        func()
}

type faulted struct{ p any }

// New returns a group of the parts' schedulers (each at the same model
// time) run with lookahead, which must be above 0.
func New(parts []*sched.Scheduler, lookahead time.Duration) *Group {
	if lookahead <= 0 {
		panic("parallel: a lookahead above 0 is needed")
	}
	g := &Group{Parts: parts, Lookahead: lookahead, parts: make([]part, len(parts)), marks: make([]uint64, len(parts))}
	for i := range g.parts {
		g.parts[i].wake = make(chan struct{}, 1)
		g.parts[i].seen = make([]int64, len(parts))
	}
	return g
}

// Post hands f from part src to part dst, to run at model time at there,
// as an event scheduled at from (the frame's departure, the current time
// of src) by cut origin (above 0). It is called on src's goroutine, from
// one of src's events; at must be at least src's time plus the
// lookahead (a frame's departure plus the cut's delay is): anything
// earlier might be too late for dst, and is a fault of the lookahead,
// which panics.
func (g *Group) Post(src, dst int, at, from time.Duration, origin uint32, f func()) {
	if now := g.Parts[src].Now(); at < now+g.Lookahead {
		panic(fmt.Sprintf("parallel: part %d posted an event at %v to part %d at %v, less than the lookahead %v ahead (the lookahead is more than the cut's delay)", src, at, dst, now, g.Lookahead))
	}
	p := &g.parts[dst]
	p.mu.Lock()
	p.inbox = append(p.inbox, post{at: at, from: from, origin: origin, f: f})
	p.mu.Unlock()
}

// take hands part i's inbox to its scheduler and reports whether there
// was anything in it. Posts from each sender keep their order.
func (g *Group) take(i int) bool {
	p := &g.parts[i]
	p.mu.Lock()
	in := p.inbox
	p.inbox = p.spare[:0]
	p.mu.Unlock()
	for _, q := range in {
		g.Parts[i].AtFrom(q.at, q.from, q.origin, q.f)
	}
	clear(in)
	p.spare = in[:0]
	return len(in) > 0
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

// RunUntil runs every part's events due at or before t, the parts at once,
// and leaves every clock at t, as sched.Scheduler.RunUntil does one
// scheduler's.
func (g *Group) RunUntil(t time.Duration) {
	g.run(func(i int) { g.until(i, t) })
}

// RunLead runs the parts until done reports true after an event of part
// lead, or until the lead's clock reaches limit, or until nothing is left
// to run, and returns whether done did; done is called on the lead's
// goroutine. The others run behind the lead: none runs an event at or
// after the lead's safe time, so when the lead is done at t they have not
// passed t; they then run their events due before t and leave their
// clocks there. So a test that runs in one part ends as it would in one
// scheduler, with the other parts (a background load) at the same model
// time. Only an event of another part at the very nanosecond the test
// ends has not run, where in one scheduler it might have.
func (g *Group) RunLead(lead int, done func() bool, limit time.Duration) bool {
	ls := g.Parts[lead]
	if len(g.Parts) == 1 {
		for !done() && ls.Now() < limit && ls.Step() {
		}
		return done()
	}
	g.run(func(i int) {
		if i == lead {
			g.lead(i, done, limit)
		} else {
			g.follow(i, lead)
		}
	})
	return done()
}

// run runs f(i) for every part i at once, part 0 on the caller's
// goroutine, hands on what is still in the inboxes when all have
// returned, and raises a part's panic again on the caller's goroutine.
func (g *Group) run(f func(i int)) {
	g.fault.Store(nil)
	for i := range g.parts {
		p := &g.parts[i]
		p.safe.Store(int64(g.Parts[i].Now()))
		p.idle.Store(0)
		p.epoch = 1
	}
	var wg sync.WaitGroup
	for i := 1; i < len(g.Parts); i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g.guard(i, f)
		}()
	}
	g.guard(0, f)
	wg.Wait()
	for i := range g.parts {
		g.take(i)
	}
	if fp := g.fault.Load(); fp != nil {
		panic(fp.p)
	}
}

// guard runs f(i), and on a panic notes it and wakes every part so that
// all return.
func (g *Group) guard(i int, f func(int)) {
	defer func() {
		if p := recover(); p != nil {
			g.fault.CompareAndSwap(nil, &faulted{p})
			for j := range g.parts {
				g.wakeUp(j)
			}
		}
	}()
	f(i)
}

// failed reports whether another part panicked; it unwinds this one.
func (g *Group) failed() bool { return g.fault.Load() != nil }

// horizon takes part i's inbox and returns the time before which nothing
// more can reach it from the parts other than except (-1 for none): each
// one's safe time plus the lookahead. The safe times are read before the
// inbox, so every post sent before them is in it, and kept in seen:
// what wait waits to change.
func (g *Group) horizon(i, except int) time.Duration {
	p := &g.parts[i]
	h := never
	for j := range g.parts {
		if j == i {
			continue
		}
		s := g.parts[j].safe.Load()
		p.seen[j] = s
		if j != except && time.Duration(s) != never {
			h = min(h, time.Duration(s)+g.Lookahead)
		}
	}
	if g.take(i) {
		p.epoch++
		p.idle.Store(0)
	}
	return h
}

// publishEvery is how much model time a part runs between two safe
// times said while it runs (a fraction of the lookahead): often enough
// that the others always have most of a lookahead ahead of them.
func (g *Group) publishEvery() time.Duration { return max(g.Lookahead/4, 1) }

// say stores part i's safe time and wakes any part that sleeps waiting.
func (g *Group) say(i int, t time.Duration) {
	g.parts[i].safe.Store(int64(t))
	for j := range g.parts {
		if j != i && g.parts[j].sleeping.Load() {
			g.wakeUp(j)
		}
	}
}

func (g *Group) wakeUp(j int) {
	select {
	case g.parts[j].wake <- struct{}{}:
	default:
	}
}

// step runs part i's events before bound, saying its safe time every
// publishEvery of model time, and returns the next event's time (never
// when none). stop, if not nil, is asked before each event.
func (g *Group) step(i int, bound time.Duration, said *time.Duration, stop func() bool) time.Duration {
	s := g.Parts[i]
	for n := nextOf(s); ; n = nextOf(s) {
		if n >= bound || stop != nil && stop() {
			return n
		}
		if n-*said >= g.publishEvery() {
			g.say(i, n)
			*said = n
		}
		s.Step()
	}
}

// nextOf is s's next event's time, never when it has none.
func nextOf(s *sched.Scheduler) time.Duration {
	if n, ok := s.Next(); ok {
		return n
	}
	return never
}

// until is part i's share of RunUntil(t).
func (g *Group) until(i int, t time.Duration) {
	said := g.Parts[i].Now()
	for !g.failed() {
		h := g.horizon(i, -1)
		next := g.step(i, min(h, t+1), &said, nil)
		if next > t && h > t {
			g.Parts[i].RunUntil(t)
			g.say(i, never)
			return
		}
		said = min(next, h)
		g.say(i, said)
		g.wait(i)
	}
}

// follow is part i's share of RunLead, behind lead.
func (g *Group) follow(i, lead int) {
	said := g.Parts[i].Now()
	for !g.failed() {
		h := g.horizon(i, lead)
		ls := time.Duration(g.parts[i].seen[lead])
		bound := min(h, ls)
		if ls == never { // the lead has stopped, at stop
			bound = min(h, time.Duration(g.stop.Load()))
		} else {
			h = min(h, ls+g.Lookahead)
		}
		next := g.step(i, bound, &said, nil)
		if ls == never {
			if t := time.Duration(g.stop.Load()); next >= t && h >= t {
				if g.Parts[i].Now() < t {
					g.Parts[i].RunBefore(t)
				}
				g.say(i, never)
				return
			}
		}
		said = min(next, h)
		if next == never {
			g.parts[i].idle.Store(g.parts[i].epoch)
		}
		g.say(i, said)
		g.wait(i)
	}
}

// lead is the lead's share of RunLead: it runs until done, the limit or
// an idle lab, then says where it stopped.
func (g *Group) lead(i int, done func() bool, limit time.Duration) {
	s := g.Parts[i]
	said := s.Now()
	finished := func() bool { return done() || s.Now() >= limit }
	for !g.failed() && !finished() {
		h := g.horizon(i, -1)
		next := g.step(i, h, &said, finished)
		if finished() || min(next, h) >= limit || next == never && g.idle(i) {
			break
		}
		said = min(next, h)
		g.say(i, said)
		g.wait(i)
	}
	g.stop.Store(int64(s.Now()))
	g.say(i, never)
}

// idle reports whether every part but the lead i waits with nothing to
// run and nothing is on its way: two looks at the others' idle marks,
// with every inbox empty between them, that agree.
func (g *Group) idle(i int) bool {
	for j := range g.parts {
		if j != i {
			if g.marks[j] = g.parts[j].idle.Load(); g.marks[j] == 0 {
				return false
			}
		}
	}
	for j := range g.parts {
		p := &g.parts[j]
		p.mu.Lock()
		n := len(p.inbox)
		p.mu.Unlock()
		if n > 0 {
			return false
		}
	}
	for j := range g.parts {
		if j != i && g.parts[j].idle.Load() != g.marks[j] {
			return false
		}
	}
	return true
}

// spinFor is how long a part waits for news spinning before it sleeps
// until another part says a safe time: waking a sleeping thread took
// 50-100 µs on the machines measured, longer than most waits.
const spinFor = time.Millisecond

// yieldEvery is how many times a waiting part reads the others' safe
// times between two runtime.Gosched calls (a few microseconds): a
// goroutine readied on the waiting part's thread still runs, and with
// fewer processors than parts the others get their turn.
const yieldEvery = 1024

// wait returns once another part has said a safe time other than the one
// part i last read (horizon), or a part failed. The lead's stop is said
// by its safe time going to never, so it is seen as any other.
func (g *Group) wait(i int) {
	p := &g.parts[i]
	changed := func() bool {
		if g.failed() {
			return true
		}
		for j := range g.parts {
			if j != i && g.parts[j].safe.Load() != p.seen[j] {
				return true
			}
		}
		return false
	}
	deadline := time.Now().Add(spinFor)
	for n := 1; !changed(); n++ {
		if n%yieldEvery != 0 {
			continue
		}
		if time.Now().Before(deadline) {
			runtime.Gosched()
			continue
		}
		p.sleeping.Store(true)
		if !changed() {
			<-p.wake
		}
		p.sleeping.Store(false)
		deadline = time.Now().Add(spinFor)
	}
}
