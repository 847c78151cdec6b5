// Package remote runs one part of a split lab in this process and the
// others in processes of their own, joined by connections, as one
// conservative parallel simulation with the cuts' lookahead: what crosses
// a cut is sent as bytes and stamps (Post) that the far process turns
// into the same event (sched.AtFrom), so every part runs its events in
// the order one scheduler would. The first part's process relays: the
// others each have one connection, to it.
//
// The parts do not meet at a barrier. Each tells the others, as it goes,
// its safe time (it will run no event before it again, and has sent
// everything its earlier events posted) with what it posted, and runs on
// without waiting while its next event is before every other part's safe
// time plus the lookahead: nothing can reach it earlier. A test's lead and
// the parts following it are held to that alone, so a part may be up to a
// lookahead ahead of any other, either way: a stretch of heavy work in
// one part is taken up by the other running on rather than by both
// meeting at every window's end. A part following the lead that has run
// past the lead's stop at t says its figure as it stood at t, which it
// noted as it went.
//
// Two parts' processes on one machine tell each other their safe times
// in memory they share (Shared), without a system call; what a part
// posts still travels over the connection, in an account it writes
// before the safe time beside it, and the other reads it before it
// believes that safe time.
//
// Every process runs the same steps: RunUntil together; a test's lead
// runs RunLead and then End while the others Follow it.
package remote

import (
	"fmt"
	"runtime"
	"time"

	"github.com/atmlab/atmlab/emulator/sched"
)

// Group is this process's part of a split lab and its connections to
// the others' processes.
type Group struct {
	Sched     *sched.Scheduler
	Part      int // this process's part, 0 the relay
	Lookahead time.Duration
	// Deliver turns a post for this part into its event on Sched.
	Deliver func(origin uint32, at, from time.Duration, data []byte)

	conns []*Conn // the relay: by part (nil at 0); the others: [0] the relay's
	// safe is each part's safe time as last heard (this part's as last
	// sent): it runs no event before it again.
	safe    []time.Duration
	out     []Post
	enc     []byte
	catches int // lead's stops heard (OpCatch), and the last one's time
	stop    time.Duration
	ends    int // lead's ends heard (OpEnd), and the last one's time
	endAt   time.Duration
	caught  int    // catches this part has followed
	ended   int    // ends this part has followed
	sleeps  int    // times the relay of three parts or more slept waiting
	notes   []note // a follower's figure before its events where the lead may stop
	// Two parts whose connection shares memory (Conn.Use) tell each
	// other their safe times there: sh, the other part and its
	// connection.
	sh   *Shared
	peer int
	pc   *Conn
}

// Fault is a failure of the connections or of a peer, raised as a panic
// from inside a run (the models have no error path); the caller of the
// run recovers it.
type Fault struct{ Err error }

func (f *Fault) Error() string { return f.Err.Error() }

// New returns part's group of n parts: for part 0, conns by part (its own
// nil); for any other, conns[0] the connection to part 0's process.
func New(s *sched.Scheduler, part, n int, lookahead time.Duration, conns []*Conn) *Group {
	if lookahead <= 0 {
		panic("remote: a lookahead above 0 is needed")
	}
	g := &Group{Sched: s, Part: part, Lookahead: lookahead, conns: conns, safe: make([]time.Duration, n)}
	g.Connected()
	return g
}

// Connected takes up the group's connections as they are in the conns
// New was given, which may be filled in after it: the run's process
// builds its part while the others' processes start and connect.
func (g *Group) Connected() {
	for _, c := range g.conns {
		if c != nil {
			c.full = g.drain
			if len(g.safe) == 2 && c.shared != nil {
				g.sh, g.pc, g.peer = c.shared, c, 1-g.Part
			}
		}
	}
}

// Post hands data to part dst, to become an event due at at there,
// scheduled at from by cut origin. at must be at least this part's safe
// time as last sent plus the lookahead: the far part may have run that
// far.
func (g *Group) Post(dst int, at, from time.Duration, origin uint32, data []byte) {
	if edge := g.safe[g.Part] + g.Lookahead; at < edge {
		panic(fmt.Sprintf("remote: part %d posted an event at %v to part %d, before %v, which that part may have reached (the lookahead %v is more than the cut's delay)", g.Part, at, dst, edge, g.Lookahead))
	}
	g.out = append(g.out, Post{Dst: uint16(dst), Origin: origin, At: at, From: from, Data: data})
}

// Now is this part's clock: after RunUntil(t), t in every process.
func (g *Group) Now() time.Duration { return g.Sched.Now() }

func (g *Group) fail(err error) { panic(&Fault{Err: err}) }

// bound is the time before which this part may run its events: every
// other part's safe time plus the lookahead.
func (g *Group) bound() time.Duration {
	b := time.Duration(-1)
	for j, s := range g.safe {
		if j != g.Part && (b < 0 || s+g.Lookahead < b) {
			b = s + g.Lookahead
		}
	}
	return b
}

// report tells the other parts this part's safe time (when it grew, or
// op is not a plain account) and what it posted since it last did.
func (g *Group) report(op Op, safe time.Duration, going bool) {
	plain := op == OpUntil || op == OpLead || op == OpFollow
	if plain && safe <= g.safe[g.Part] && len(g.out) == 0 {
		return
	}
	g.safe[g.Part] = max(g.safe[g.Part], safe)
	if g.sh != nil && plain && len(g.out) == 0 {
		g.sh.safe(g.Part).Store(int64(g.safe[g.Part]))
		if g.sh.sleeping(g.peer).Load() == 0 {
			return
		}
		// The other part sleeps until its connection has something: the
		// account goes there too.
	}
	mine := Entry{Part: uint16(g.Part), Op: op, Pending: g.Sched.Pending() > 0, Going: going,
		Now: safe, Sent: uint32(len(g.out)), Posts: g.out}
	if g.Part != 0 { // the relay passes each post on to its part
		g.write(g.conns[0], &Window{Entries: []Entry{mine}})
	} else {
		for i, c := range g.conns {
			if c != nil {
				g.write(c, &Window{Entries: []Entry{postsFor(mine, i)}})
			}
		}
	}
	if g.sh != nil { // the account is there to read before the safe time it says
		g.sh.accounts(g.Part).Store(g.pc.wrote)
		g.sh.safe(g.Part).Store(int64(g.safe[g.Part]))
	}
	clear(g.out)
	g.out = g.out[:0]
}

// postsFor is e with only its posts for part dst.
func postsFor(e Entry, dst int) Entry {
	ps := e.Posts
	e.Posts = nil
	for _, p := range ps {
		if int(p.Dst) == dst {
			e.Posts = append(e.Posts, p)
		}
	}
	return e
}

// handle takes in one part's entry, read from connection i: its posts
// for this part become events, its safe time and a lead's stop or end
// are noted, and the relay passes it on to every other part.
func (g *Group) handle(i int, e Entry) {
	j := int(e.Part)
	if j == g.Part || j >= len(g.safe) || (g.Part == 0 && j != i) {
		g.fail(fmt.Errorf("part %s sent an account of part %d, out of place", g.conns[i].Name, j))
	}
	for _, p := range e.Posts {
		if int(p.Dst) == g.Part {
			g.Deliver(p.Origin, p.At, p.From, p.Data)
		}
	}
	g.safe[j] = max(g.safe[j], e.Now)
	switch e.Op {
	case OpCatch:
		g.catches++
		g.stop = e.Now
	case OpEnd:
		g.ends++
		g.endAt = e.Now
	}
	if g.Part == 0 && len(g.conns) > 2 {
		for k, c := range g.conns {
			if c != nil && k != j {
				g.write(c, &Window{Entries: []Entry{postsFor(e, k)}})
			}
		}
	}
}

// take handles a message from connection i.
func (g *Group) take(i int, kind byte, body []byte) {
	if kind != KindWindow {
		g.fail(fmt.Errorf("part %s sent a message of kind %q inside a run", g.conns[i].Name, kind))
	}
	w, err := Decode(body)
	if err != nil {
		g.fail(fmt.Errorf("part %s: %w", g.conns[i].Name, err))
	}
	// Posts alias the connection's buffer, which the next read reuses:
	// Deliver turns them into events before then.
	for _, e := range w.Entries {
		g.handle(i, e)
	}
}

// next returns connection i's next message, waiting for it if block;
// else at once a window that has begun to arrive (ok false if none has:
// a part's figures, sent after its last window, wait for Gather).
func (g *Group) next(i int, block bool) (kind byte, body []byte, ok bool) {
	var err error
	if block {
		kind, body, err = g.conns[i].Read()
		ok = err == nil
	} else {
		kind, body, ok, err = g.conns[i].TryRead(KindWindow)
	}
	if err != nil {
		g.fail(err)
	}
	return kind, body, ok
}

// poll handles every message that has arrived and says whether there
// was one. It looks at each socket once (a system call), and takes what
// that read brought.
func (g *Group) poll() (took bool) {
	for i, c := range g.conns {
		if c == nil {
			continue
		}
		for tried := false; !tried || c.buffered(); tried = true {
			kind, body, ok := g.next(i, false)
			if !ok {
				break
			}
			g.take(i, kind, body)
			took = true
		}
	}
	return took
}

// drain keeps what has arrived on every connection for later reads,
// while a write waits for the far end to read: both ends may be writing
// at once.
func (g *Group) drain() {
	for _, c := range g.conns {
		if c != nil {
			c.keep()
		}
	}
}

// await handles messages until cond holds, waiting for them when none
// has arrived. Where cond holds already it reads nothing (a system call
// saved): what has not been read can only be due at or after the bound
// cond was met with, as a post is at least its sender's safe time, as
// last sent, plus the lookahead. The relay of three parts or more reads
// on, as the others wait for what it passes on.
func (g *Group) await(cond func() bool) {
	if g.sh != nil {
		g.awaitShared(cond)
		return
	}
	if cond() && (g.Part != 0 || len(g.conns) <= 2) {
		return
	}
	g.poll()
	only := -1 // the one connection, if this process has one
	for i, c := range g.conns {
		if c != nil {
			if only >= 0 {
				only = -2
				break
			}
			only = i
		}
	}
	deadline := time.Now().Add(g.timeout())
	var quiet time.Time // since when the relay's polls found nothing
	for !cond() {
		if only >= 0 {
			kind, body, _ := g.next(only, true)
			g.take(only, kind, body)
			g.poll()
			continue
		}
		// The relay of three parts or more polls them all, and after
		// SpinFor with nothing from any sleeps until one has something:
		// polling on, it took a core from the parts it waits for.
		if g.poll() {
			deadline, quiet = time.Now().Add(g.timeout()), time.Time{}
		} else if now := time.Now(); now.After(deadline) {
			g.fail(fmt.Errorf("no part sent anything for %v: a part's process hangs or is gone", g.timeout()))
		} else if quiet.IsZero() {
			quiet = now
		} else if now.Sub(quiet) >= SpinFor {
			g.sleeps++
			waitReadable(g.conns, deadline.Sub(now))
			quiet = time.Time{}
		}
	}
}

// pollShared takes in the other part's safe time from shared memory, and
// first the accounts it wrote to the connection before it said it: a
// post always travels in one. It says whether there was news.
func (g *Group) pollShared() (took bool) {
	safe := time.Duration(g.sh.safe(g.peer).Load())
	for wrote := g.sh.accounts(g.peer).Load(); g.pc.read < wrote; took = true {
		i := 1 - g.Part // the connection's place in conns
		kind, body, _ := g.next(i, true)
		g.take(i, kind, body)
	}
	if safe > g.safe[g.peer] {
		g.safe[g.peer], took = safe, true
	}
	return took
}

// awaitShared is await for two parts that share memory: it reads the
// other's safe time there, spinning, for SpinFor; then it says it
// sleeps and waits for the connection, where the other part, seeing
// that, sends its accounts until it wakes.
func (g *Group) awaitShared(cond func() bool) {
	g.pollShared()
	spin := time.Now().Add(SpinFor)
	for n := 1; !cond(); n++ {
		if g.pollShared() || n%64 != 0 {
			continue
		}
		if n%yieldEvery == 0 {
			runtime.Gosched()
		}
		if time.Now().Before(spin) {
			continue
		}
		g.sh.sleeping(g.Part).Store(1)
		if !g.pollShared() {
			i := 1 - g.Part
			kind, body, _ := g.next(i, true)
			g.take(i, kind, body)
		}
		g.sh.sleeping(g.Part).Store(0)
		spin = time.Now().Add(SpinFor)
	}
}

// yieldEvery is how many of its polls of shared memory a waiting part
// makes between two runtime.Gosched calls, so that a goroutine readied
// on its thread still runs.
const yieldEvery = 1 << 14

// leave clears this part's words in shared memory at the point's end,
// so that the next point's other part does not read this one's safe
// time: a part's process serves a run's points one after the other.
func (g *Group) leave() {
	if g.sh != nil {
		g.sh.safe(g.Part).Store(0)
		g.sh.sleeping(g.Part).Store(0)
	}
}

func (g *Group) timeout() time.Duration {
	for _, c := range g.conns {
		if c != nil && c.Timeout > 0 {
			return c.Timeout
		}
	}
	return time.Minute
}

func (g *Group) write(c *Conn, w *Window) {
	g.enc = w.Append(g.enc[:0])
	if err := c.Write(KindWindow, g.enc); err != nil {
		g.fail(err)
	}
}

// Quantum is how far, as a share of the lookahead, a part runs before it
// tells the others its safe time: the smaller, the sooner a part waiting
// for it goes on, and the more messages, each a system call or two at
// both ends. A half lets a part run while the other runs the half
// before, as many messages as windows of half the lookahead took; on
// split-halves.yaml as processes it was faster than those windows in 10
// of 12 runs side by side on a loaded machine (docs/benchmarks.md), a
// quarter no faster than the windows. With the safe times in shared
// memory (a store, not a message) an eighth to a thirty-second was no
// faster than a half either (4.40-4.59 s on the same lab, load 2.9-3.6).
var Quantum = 2

// step is the end of this part's next stretch: before b, at most a
// quantum past its safe time.
func (g *Group) step(b time.Duration) time.Duration {
	return min(b, g.safe[g.Part]+max(g.Lookahead/time.Duration(Quantum), 1))
}

// RunUntil runs every part's events due at or before t, each part as far
// as the others' safe times allow, as parallel.Group.RunUntil does; every
// process calls it. It returns once this part is at t; the others may
// not be yet.
func (g *Group) RunUntil(t time.Duration) {
	for {
		b := g.bound()
		e := g.step(b)
		if e > t {
			g.Sched.RunUntil(t)
			g.report(OpUntil, t, false)
			return
		}
		g.Sched.RunBefore(e)
		g.report(OpUntil, e, false)
		g.await(func() bool { return g.bound() > e })
	}
}

// RunLead is parallel.Group.RunLead for the lead's process: it runs until
// done after one of its events, or its clock reaches limit, or it has
// nothing left before limit, at most a lookahead ahead of the others,
// which Follow it no further than its safe time; it then tells them
// where it stopped.
func (g *Group) RunLead(done func() bool, limit time.Duration) bool {
	for {
		b := g.bound()
		e := g.step(b)
		stopped := false
		for {
			if done() || g.Sched.Now() >= limit {
				stopped = true
				break
			}
			if next, ok := g.Sched.Next(); !ok || next >= e {
				break
			}
			g.Sched.Step()
		}
		if _, ok := g.Sched.Next(); stopped || (!ok && e >= limit) {
			break
		}
		g.report(OpLead, e, true)
		g.await(func() bool { return g.bound() > e })
	}
	g.report(OpCatch, g.Sched.Now(), false)
	return done()
}

// End tells the parts following this lead that its test is over, once
// each has caught up with where it stopped: none writes to it after, so
// its process may end with the point (a follower still catching up once
// wrote to a lead gone: a broken pipe).
func (g *Group) End() {
	now := g.Sched.Now()
	g.await(func() bool { return g.bound() >= now+g.Lookahead }) // every other part's safe time >= now
	g.report(OpEnd, now, false)
}

// Follow runs this part beside lead's RunLeads until the lead Ends, as
// far as every other part's safe time plus the lookahead allows: up to a
// lookahead past the lead's own, so that a stretch of heavy work in
// either part is taken up by the other running on. Where the lead stops,
// it runs every event before the stop; it may have run past it (never by
// a lookahead: nothing it did after reaches the lead before the stop). It
// returns figure as it stood where the lead Ended (its last stop), before
// this part's first event at or after it, as one scheduler stopping there
// would have left it (0 with figure nil).
func (g *Group) Follow(lead int, figure func() uint64) uint64 {
	for {
		switch {
		case g.catches > g.caught: // the lead stopped: run what is due before it
			stop := g.stop
			for g.Sched.Now() < stop {
				e := g.step(min(g.bound(), stop))
				g.runNoting(lead, e, figure)
				g.report(OpFollow, e, false)
				if e < stop {
					g.await(func() bool { return g.bound() > e })
				}
			}
			g.caught++
			continue
		case g.ends > g.ended:
			g.ended++
			at := g.figureAt(g.endAt, figure)
			g.notes = g.notes[:0]
			return at
		}
		e := g.step(g.bound())
		g.runNoting(lead, e, figure)
		g.report(OpFollow, e, false)
		g.await(func() bool {
			return g.catches > g.caught || g.ends > g.ended || g.bound() > e
		})
	}
}

// note is a follower's figure as it stood before its event at at.
type note struct {
	at    time.Duration
	value uint64
}

// runNoting runs this part's events before e, noting figure (if any)
// before each at or after lead's safe time, where the lead may yet stop:
// it stops after an event of its own, at or after the safe time it said
// last. Notes before that are dropped.
func (g *Group) runNoting(lead int, e time.Duration, figure func() uint64) {
	if figure == nil {
		g.Sched.RunBefore(e)
		return
	}
	from := g.safe[lead]
	n := 0
	for n < len(g.notes) && g.notes[n].at < from {
		n++
	}
	g.notes = append(g.notes[:0], g.notes[n:]...)
	for next, ok := g.Sched.Next(); ok && next < e; next, ok = g.Sched.Next() {
		if next >= from {
			g.notes = append(g.notes, note{next, figure()})
		}
		g.Sched.Step()
	}
	g.Sched.RunBefore(e)
}

// figureAt is figure as it stood before this part's first event at or
// after stop: as noted, or as it is if this part has run none.
func (g *Group) figureAt(stop time.Duration, figure func() uint64) uint64 {
	if figure == nil {
		return 0
	}
	for _, n := range g.notes {
		if n.at >= stop {
			return n.value
		}
	}
	return figure()
}

// Gather sends body to part 0's process, which returns every part's
// (its own first); the others return nil. Accounts still on their way
// are taken in first.
func (g *Group) Gather(body []byte) ([][]byte, error) {
	if g.Part != 0 {
		g.leave()
		return nil, g.conns[0].Write(KindJSON, body)
	}
	defer g.leave()
	all := [][]byte{body}
	for i, c := range g.conns[1:] {
		for {
			kind, b, err := func() (kind byte, b []byte, err error) {
				defer func() {
					if r := recover(); r != nil {
						f, ok := r.(*Fault)
						if !ok {
							panic(r)
						}
						err = f.Err
					}
				}()
				kind, b, _ = g.next(i+1, true)
				if kind == KindWindow {
					g.take(i+1, kind, b)
				}
				return kind, b, nil
			}()
			if err != nil {
				return nil, err
			}
			if kind == KindWindow {
				continue
			}
			if kind != KindJSON {
				return nil, fmt.Errorf("part %s sent a message of kind %q where its figures were due", c.Name, kind)
			}
			all = append(all, append([]byte(nil), b...))
			break
		}
	}
	return all, nil
}
