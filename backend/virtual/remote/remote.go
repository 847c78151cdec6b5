// Package remote runs one part of a split lab in this process and the
// others in processes of their own, joined by connections: the
// conservative windows of package emulator/sched/window, with what
// crosses a cut sent at each window's end as bytes and stamps (Post) that
// the far process turns into the same event (sched.AtFrom), so every part
// runs its events in the order one scheduler would. The first part's
// process relays: the others each have one connection, to it.
//
// Every process runs the same steps: RunUntil together; a test's lead
// runs RunLead and then End while the others Follow it.
package remote

import (
	"fmt"
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

	conns  []*Conn // the relay: by part (nil at 0); the others: [0] the relay's
	clocks []time.Duration
	out    []Post
	edge   time.Duration
	enc    []byte
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
	return &Group{Sched: s, Part: part, Lookahead: lookahead, conns: conns, clocks: make([]time.Duration, n)}
}

// Post hands data to part dst, to become an event due at at there,
// scheduled at from by cut origin. at must not be inside this window.
func (g *Group) Post(dst int, at, from time.Duration, origin uint32, data []byte) {
	if at < g.edge {
		panic(fmt.Sprintf("remote: part %d posted an event at %v to part %d inside the window ending at %v (the lookahead %v is more than the cut's delay)", g.Part, at, dst, g.edge, g.Lookahead))
	}
	g.out = append(g.out, Post{Dst: uint16(dst), Origin: origin, At: at, From: from, Data: data})
}

// Now is the model time every part has reached, as of the last window.
func (g *Group) Now() time.Duration {
	now := g.clocks[0]
	for _, c := range g.clocks[1:] {
		now = min(now, c)
	}
	return now
}

func (g *Group) fail(err error) { panic(&Fault{Err: err}) }

// writeFirst bounds the relay's message to a part that it sends before
// it has read that part's: both ends write first, so that the window's
// exchange costs one message's way, not the two of read-then-relay,
// while each write still fits the connection's buffer at once (a larger
// one waits until the part's own is read, or both would block).
const writeFirst = 16 << 10

// exchange ends a window: this part's entry out, every part's in, the
// posts for this part delivered by sender in part order, each sender's in
// the order posted. Every part sends the relay its entry; the relay
// sends each part its own entry at once (it needs no one's to write it)
// and, with three parts or more, the others' once it has read them.
func (g *Group) exchange(op Op, going bool, limit time.Duration) []Entry {
	mine := Entry{Part: uint16(g.Part), Op: op, Pending: g.Sched.Pending() > 0, Going: going,
		Now: g.Sched.Now(), Limit: limit, Sent: uint32(len(g.out)), Posts: g.out}
	all := make([]Entry, len(g.clocks))
	all[g.Part] = mine
	if g.Part == 0 {
		early := make([]bool, len(all))
		for i := 1; i < len(all); i++ {
			g.enc = (&Window{Entries: []Entry{postsFor(mine, i)}}).Append(g.enc[:0])
			if early[i] = len(g.enc) <= writeFirst; early[i] {
				g.send(g.conns[i], g.enc)
			}
		}
		for i := 1; i < len(all); i++ {
			e := g.read(g.conns[i])
			if len(e) != 1 || int(e[0].Part) != i {
				g.fail(fmt.Errorf("part %s sent a window that is not its own", g.conns[i].Name))
			}
			all[i] = e[0]
		}
		for i := 1; i < len(all); i++ {
			if !early[i] {
				g.write(g.conns[i], &Window{Entries: []Entry{postsFor(mine, i)}})
			}
			if len(all) > 2 {
				w := Window{}
				for j, e := range all[1:] {
					if j+1 != i {
						w.Entries = append(w.Entries, postsFor(e, i))
					}
				}
				g.write(g.conns[i], &w)
			}
		}
		g.deliver(all)
	} else {
		g.write(g.conns[0], &Window{Entries: []Entry{mine}})
		got := g.read(g.conns[0])
		if len(got) != 1 || got[0].Part != 0 {
			g.fail(fmt.Errorf("part %s relayed a window that is not its own", g.conns[0].Name))
		}
		all[0] = got[0]
		// The next read reuses the buffer the posts alias: the relay's
		// are delivered first, as they come first in part order.
		g.deliver(all[:1])
		if len(all) > 2 {
			got = g.read(g.conns[0])
			if len(got) != len(all)-2 {
				g.fail(fmt.Errorf("part %s relayed %d parts' windows, want %d", g.conns[0].Name, len(got), len(all)-2))
			}
			for _, e := range got {
				if int(e.Part) == 0 || int(e.Part) == g.Part || int(e.Part) >= len(all) || all[e.Part].Op != 0 {
					g.fail(fmt.Errorf("part %s relayed a window of part %d twice or out of place", g.conns[0].Name, e.Part))
				}
				all[e.Part] = e
			}
			g.deliver(all[1:])
		}
	}
	lead := OpUntil
	for _, e := range all {
		if e.Op != OpFollow {
			lead = e.Op
		}
	}
	for i, e := range all {
		if (e.Op == OpUntil) != (lead == OpUntil) {
			g.fail(fmt.Errorf("the parts are out of step: part %d at step %d, another at %d", i, e.Op, lead))
		}
		g.clocks[i] = e.Now
		all[i].Posts = nil
	}
	clear(g.out)
	g.out = g.out[:0]
	return all
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

// deliver hands this part the posts of entries, in their order.
func (g *Group) deliver(entries []Entry) {
	for _, e := range entries {
		for _, p := range e.Posts {
			if int(p.Dst) == g.Part {
				g.Deliver(p.Origin, p.At, p.From, p.Data)
			}
		}
	}
}

func (g *Group) write(c *Conn, w *Window) {
	g.enc = w.Append(g.enc[:0])
	g.send(c, g.enc)
}

func (g *Group) send(c *Conn, body []byte) {
	if err := c.Write(KindWindow, body); err != nil {
		g.fail(err)
	}
}

func (g *Group) read(c *Conn) []Entry {
	kind, body, err := c.Read()
	if err != nil {
		g.fail(err)
	}
	if kind != KindWindow {
		g.fail(fmt.Errorf("part %s sent a message of kind %q inside a run", c.Name, kind))
	}
	w, err := Decode(body)
	if err != nil {
		g.fail(fmt.Errorf("part %s: %w", c.Name, err))
	}
	// Posts alias the connection's buffer, which the next read reuses:
	// Deliver turns them into events before then.
	return w.Entries
}

// idle says whether no part has an event left and none sent one.
func idle(all []Entry) bool {
	for _, e := range all {
		if e.Pending || e.Sent > 0 {
			return false
		}
	}
	return true
}

// RunUntil runs every part's events due at or before t, in windows of
// the lookahead, as window.Group.RunUntil does; every process calls it.
func (g *Group) RunUntil(t time.Duration) {
	for now := g.Now(); now < t; now = g.Now() {
		end := min(now+g.Lookahead, t)
		g.edge = end
		g.Sched.RunBefore(end)
		g.exchange(OpUntil, false, 0)
	}
	g.edge = t
	g.Sched.RunUntil(t)
	g.exchange(OpUntil, false, 0)
}

// RunLead is window.Group.RunLead for the lead's process: it runs until
// done after one of its events, or its clock reaches limit, or nothing is
// left, half a lookahead ahead of the others, which Follow it.
func (g *Group) RunLead(done func() bool, limit time.Duration) bool {
	half := max(g.Lookahead/2, 1)
	base := g.Now()
	at := func(k int) time.Duration { return base + time.Duration(k)*half }
	going := true
	step := func(end time.Duration) {
		for {
			if done() || g.Sched.Now() >= limit {
				going = false
				return
			}
			if next, ok := g.Sched.Next(); !ok || next >= end {
				return
			}
			g.Sched.Step()
		}
	}
	g.edge = at(1)
	step(at(1))
	all := g.exchange(OpStart, going, limit)
	for k := 1; going; k++ {
		if idle(all) || at(k) >= limit {
			break
		}
		g.edge = at(k + 1)
		step(at(k + 1))
		all = g.exchange(OpLead, going, limit)
	}
	g.edge = g.Sched.Now()
	g.exchange(OpCatch, going, limit)
	return done()
}

// End tells the parts following this lead that its test is over.
func (g *Group) End() { g.exchange(OpEnd, false, 0) }

// Follow runs this part beside lead's RunLeads, a window behind it, until
// the lead Ends.
func (g *Group) Follow(lead int) {
	for {
		half := max(g.Lookahead/2, 1)
		base := g.Now()
		at := func(k int) time.Duration { return base + time.Duration(k)*half }
		all := g.exchange(OpFollow, false, 0)
		switch all[lead].Op {
		case OpEnd:
			return
		case OpStart:
		default:
			g.fail(fmt.Errorf("the parts are out of step: part %d at step %d where a lead's start or end was due", lead, all[lead].Op))
		}
		limit := all[lead].Limit
		for k := 1; all[lead].Going; k++ {
			if idle(all) || at(k) >= limit {
				break
			}
			g.edge = at(k)
			g.Sched.RunBefore(at(k))
			all = g.exchange(OpFollow, false, 0)
		}
		stop := all[lead].Now
		g.edge = stop
		if g.Sched.Now() < stop {
			g.Sched.RunBefore(stop)
		}
		all = g.exchange(OpFollow, false, 0)
		if all[lead].Op != OpCatch {
			g.fail(fmt.Errorf("the parts are out of step: part %d at step %d where its catch-up was due", lead, all[lead].Op))
		}
	}
}

// Gather sends body to part 0's process, which returns every part's
// (its own first); the others return nil.
func (g *Group) Gather(body []byte) ([][]byte, error) {
	if g.Part != 0 {
		return nil, g.conns[0].Write(KindJSON, body)
	}
	all := [][]byte{body}
	for _, c := range g.conns[1:] {
		kind, b, err := c.Read()
		if err != nil {
			return nil, err
		}
		if kind != KindJSON {
			return nil, fmt.Errorf("part %s sent a message of kind %q where its figures were due", c.Name, kind)
		}
		all = append(all, append([]byte(nil), b...))
	}
	return all, nil
}
