package parallel

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/atmlab/atmlab/emulator/sched"
)

// pingPong is a model of two parts: each part, at every event, logs it
// and sends the other part a message over a link of delay d (origin 1
// from part 0, 2 from part 1) until time stop; each part also has local
// timers that fall on the same instants as the messages' arrivals. post
// hands a message over; logs are per part.
type pingPong struct {
	s    [2]*sched.Scheduler
	post func(src, dst int, at, from time.Duration, origin uint32, f func())
	d    time.Duration
	logs [2][]string
	stop time.Duration
}

func (m *pingPong) event(part int, name string) func() {
	return func() {
		s := m.s[part]
		m.logs[part] = append(m.logs[part], fmt.Sprintf("%v %s", s.Now(), name))
		if s.Now()+m.d > m.stop {
			return
		}
		other := 1 - part
		now := s.Now()
		m.post(part, other, now+m.d, now, uint32(part+1), m.event(other, fmt.Sprintf("msg from %d@%v", part, now)))
		// A local timer due when that message's answer comes back, and one
		// due at the same instant as the message over there.
		s.At(now+2*m.d, func() { m.logs[part] = append(m.logs[part], fmt.Sprintf("%v local of %v", s.Now(), now)) })
	}
}

// run runs the model on one scheduler or on two, split.
func runPingPong(t *testing.T, split bool, lookahead time.Duration) [2][]string {
	m := &pingPong{d: 10, stop: 200}
	if !split {
		s := sched.New()
		m.s = [2]*sched.Scheduler{s, s}
		m.post = func(_, dst int, at, from time.Duration, origin uint32, f func()) {
			m.s[dst].AtFrom(at, from, origin, f)
		}
	} else {
		m.s = [2]*sched.Scheduler{sched.New(), sched.New()}
		g := New(m.s[:], lookahead)
		m.post = g.Post
		m.s[0].At(0, m.event(0, "start"))
		m.s[1].At(0, m.event(1, "start"))
		m.s[1].At(10, func() { m.logs[1] = append(m.logs[1], "10ns local scheduled at 0") })
		g.RunUntil(300)
		return m.logs
	}
	m.s[0].At(0, m.event(0, "start"))
	m.s[1].At(0, m.event(1, "start"))
	m.s[1].At(10, func() { m.logs[1] = append(m.logs[1], "10ns local scheduled at 0") })
	m.s[0].RunUntil(300)
	return m.logs
}

// Frames that arrive exactly a lookahead after they left (the lookahead
// the link's delay) and local events at the same instants
// run in one order whether the parts share a scheduler or run apart
// on two: at, rank, the instant scheduled at, the scheduler's own before
// those handed in, then the order handed in.
func TestSplitKeepsOneSchedulersOrder(t *testing.T) {
	want := runPingPong(t, false, 0)
	if len(want[1]) < 20 || want[1][1] != "10ns local scheduled at 0" || want[1][2] != "10ns msg from 0@0s" {
		t.Fatalf("one scheduler's order: %q", want[1][:3])
	}
	for _, la := range []time.Duration{10, 5, 3, 1} {
		got := runPingPong(t, true, la)
		for p := range 2 {
			if !slices.Equal(got[p], want[p]) {
				t.Errorf("lookahead %v, part %d:\n got %q\nwant %q", la, p, got[p], want[p])
			}
		}
	}
}

// Two cuts into one part hand over frames due at the same time and
// departed at the same instant: the lower cut's first, each cut's in the
// order sent, whenever they were handed in.
func TestEqualTimesOrderByCutThenSending(t *testing.T) {
	s := [3]*sched.Scheduler{sched.New(), sched.New(), sched.New()}
	g := New(s[:], 10)
	var got []string
	send := func(src int, origin uint32, names ...string) func() {
		return func() {
			for _, n := range names {
				g.Post(src, 2, 15, 5, origin, func() { got = append(got, n) })
			}
		}
	}
	s[1].At(5, send(1, 1, "cut1-a", "cut1-b"))
	s[0].At(5, send(0, 2, "cut2-a", "cut2-b"))
	s[2].At(15, func() { got = append(got, "own, scheduled at 0") })
	s[2].At(10, func() { s[2].At(15, func() { got = append(got, "own, scheduled at 10") }) })
	s[2].At(5, func() { s[2].At(15, func() { got = append(got, "own, scheduled at 5") }) })
	g.RunUntil(20)
	want := []string{"own, scheduled at 0", "own, scheduled at 5", "cut1-a", "cut1-b", "cut2-a", "cut2-b", "own, scheduled at 10"}
	if !slices.Equal(got, want) {
		t.Fatalf("order %q, want %q", got, want)
	}
	for i, p := range s {
		if p.Now() != 20 {
			t.Errorf("part %d at %v, want 20", i, p.Now())
		}
	}
}

// A frame due less than a lookahead after it left is a lookahead too long: Post
// refuses it rather than deliver it late.
func TestPostInsideTheLookaheadPanics(t *testing.T) {
	s := []*sched.Scheduler{sched.New(), sched.New()}
	g := New(s, 10)
	s[0].At(2, func() { g.Post(0, 1, 9, 2, 1, func() {}) })
	defer func() {
		if recover() == nil {
			t.Fatal("a post inside the lookahead did not panic")
		}
	}()
	g.RunUntil(20)
}

// RunLead stops when the lead is done, with the other parts at the lead's
// time: their events before it have run, none after.
func TestRunLeadStopsTheOthersAtTheLeadsEnd(t *testing.T) {
	s := []*sched.Scheduler{sched.New(), sched.New()}
	g := New(s, 10)
	var ran []time.Duration
	var tick func()
	tick = func() { ran = append(ran, s[1].Now()); s[1].After(3, tick) }
	s[1].At(0, tick)
	finished := false
	s[0].At(47, func() { finished = true })
	s[0].At(48, func() { t.Error("the lead ran past its end") })
	if !g.RunLead(0, func() bool { return finished }, time.Second) {
		t.Fatal("RunLead did not see the lead done")
	}
	if s[0].Now() != 47 || s[1].Now() != 47 || ran[len(ran)-1] != 45 {
		t.Fatalf("lead at %v, other at %v, its last event at %v; want 47, 47, 45", s[0].Now(), s[1].Now(), ran[len(ran)-1])
	}
	// An idle lab ends RunLead without done.
	s2 := []*sched.Scheduler{sched.New(), sched.New()}
	g2 := New(s2, 10)
	if g2.RunLead(1, func() bool { return false }, time.Second) {
		t.Fatal("an idle lab was done")
	}
}

// chatter is a model of n parts that post each other frames at random
// delays of at least d and schedule local events at random, each part
// drawing from a generator of its own in its own events' order: the same
// logs on one scheduler and split mean every part ran its events in one
// scheduler's order, wherever the parts' goroutines were. Each event has
// one successor, at its part or another, and a chain's frames come due
// at equal times often.
type chatter struct {
	s    []*sched.Scheduler
	rng  []*rand.Rand
	post func(src, dst int, at, from time.Duration, origin uint32, f func())
	d    time.Duration
	logs [][]string
	stop time.Duration
}

func (m *chatter) event(part int, name string) func() {
	return func() {
		s, r := m.s[part], m.rng[part]
		now := s.Now()
		m.logs[part] = append(m.logs[part], fmt.Sprintf("%v %s", now, name))
		if now > m.stop {
			return
		}
		// One successor, here or over there, keeps the chains' number.
		if r.IntN(2) == 0 {
			dst := r.IntN(len(m.s) - 1)
			if dst >= part {
				dst++
			}
			at := now + m.d + time.Duration(r.IntN(3))*m.d/2
			m.post(part, dst, at, now, uint32(part+1), m.event(dst, fmt.Sprintf("from %d@%v", part, now)))
		} else {
			s.At(now+time.Duration(r.IntN(int(m.d))), m.event(part, fmt.Sprintf("local of %v", now)))
		}
	}
}

func runChatter(n int, seed uint64, lookahead time.Duration, split bool) [][]string {
	m := &chatter{d: 20, stop: 2000, logs: make([][]string, n)}
	one := sched.New()
	var g *Group
	for i := range n {
		m.rng = append(m.rng, rand.New(rand.NewPCG(seed, uint64(i))))
		if split {
			m.s = append(m.s, sched.New())
		} else {
			m.s = append(m.s, one)
		}
	}
	if split {
		g = New(m.s, lookahead)
		m.post = g.Post
	} else {
		m.post = func(_, dst int, at, from time.Duration, origin uint32, f func()) {
			m.s[dst].AtFrom(at, from, origin, f)
		}
	}
	for i := range n {
		for k := range 4 {
			m.s[i].At(time.Duration(i+k), m.event(i, fmt.Sprintf("start %d", k)))
		}
	}
	if split {
		g.RunUntil(2500)
	} else {
		one.RunUntil(2500)
	}
	return m.logs
}

func TestPartsRunningApartKeepOneSchedulersOrder(t *testing.T) {
	for _, n := range []int{2, 3} {
		for seed := range uint64(20) {
			want := runChatter(n, seed, 0, false)
			for _, la := range []time.Duration{20, 7} {
				got := runChatter(n, seed, la, true)
				for p := range n {
					if !slices.Equal(got[p], want[p]) {
						t.Fatalf("%d parts, seed %d, lookahead %v, part %d: %d events, want %d; first difference at %d", n, seed, la, p, len(got[p]), len(want[p]), firstDiff(got[p], want[p]))
					}
				}
			}
		}
	}
}

func firstDiff(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// A part's panic on its own goroutine reaches the caller, and the parts
// waiting on it return.
func TestAPartsPanicReachesTheCaller(t *testing.T) {
	s := []*sched.Scheduler{sched.New(), sched.New(), sched.New()}
	g := New(s, 10)
	var tick func()
	tick = func() { s[0].After(3, tick) }
	s[0].At(0, tick)
	s[2].At(25, func() { panic("part 2 broke") })
	defer func() {
		if p := recover(); p != "part 2 broke" {
			t.Fatalf("recovered %v, want part 2's panic", p)
		}
	}()
	g.RunUntil(1000)
}
