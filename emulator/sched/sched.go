// Package sched is the one source of time for atmlab's models.
//
// A Scheduler holds a queue of events ordered by model time; equal times run
// in rank order (Timer.SetRank), then in the order they were scheduled: by
// the model time they were scheduled at, then, among events scheduled at
// one instant, a scheduler's own before those handed in from other
// schedulers (AtFrom: frames crossing a cut of a split lab, by their
// origin), then in sequence. In one scheduler the instant an event is
// scheduled at only grows with the sequence, so the order is the order
// of scheduling; across the parts of a split lab it is the one order every
// part can compute alone (package emulator/sched/parallel).
// Under a virtual clock the queue is drained as fast as the CPU allows (Run,
// RunUntil, Step) and results are exact to the nanosecond. Under a real-time
// driver (the kernel package's event loop) the driver runs the events due by
// the wall clock with RunDue, a bounded number at a time, and sleeps until
// Next. Models never read the wall clock themselves.
//
// A Scheduler is not safe for concurrent use: every call, and every event
// callback, happens on the goroutine that drives it.
package sched

import (
	"container/heap"
	"time"
)

// Scheduler is an event queue with a model clock.
type Scheduler struct {
	now    time.Duration
	seq    uint64
	events eventHeap
}

// New returns a scheduler whose clock reads zero.
func New() *Scheduler { return &Scheduler{} }

// Timer is a scheduled callback.
type Timer struct {
	s      *Scheduler
	at     time.Duration
	from   time.Duration // the model time it was scheduled at (AtFrom: given)
	origin uint32        // 0: scheduled here; else the cut it came in by (AtFrom)
	seq    uint64
	rank   uint64
	f      func()
	index  int // position in the heap, -1 once run or stopped
}

// Stop cancels the callback and reports whether it was still pending.
func (t *Timer) Stop() bool {
	if t == nil || t.index < 0 {
		return false
	}
	heap.Remove(&t.s.events, t.index)
	t.index = -1
	return true
}

// Pending reports whether the timer has neither run nor been stopped.
func (t *Timer) Pending() bool { return t != nil && t.index >= 0 }

// Now returns model time since the scheduler was created.
func (s *Scheduler) Now() time.Duration { return s.now }

// At schedules f at model time t; a time in the past runs at the next step
// with the clock unchanged (time never goes backwards).
func (s *Scheduler) At(t time.Duration, f func()) *Timer {
	if t < s.now {
		t = s.now
	}
	s.seq++
	tm := &Timer{s: s, at: t, from: s.now, seq: s.seq, f: f}
	heap.Push(&s.events, tm)
	return tm
}

// AtFrom schedules f at model time t as if it had been scheduled at model
// time from (at most t) by origin, a number above 0 naming where it came
// from: a frame that left another scheduler's part at from over cut
// origin. Among events due at the same time and rank it runs after those
// scheduled before from, and after this scheduler's own scheduled at
// from; those of one origin and instant run in the order handed in. So
// the order does not depend on when, in wall time or in this scheduler's
// model time, it was handed in. t in the past runs at the next step.
func (s *Scheduler) AtFrom(t, from time.Duration, origin uint32, f func()) *Timer {
	if t < s.now {
		t = s.now
	}
	s.seq++
	tm := &Timer{s: s, at: t, from: min(from, t), origin: origin, seq: s.seq, f: f}
	heap.Push(&s.events, tm)
	return tm
}

// NewTimer returns a timer for f that is not scheduled yet; Reset schedules
// it. A model with one event outstanding at a time (a transmitter's next
// departure) reuses one timer instead of allocating an event each time.
func (s *Scheduler) NewTimer(f func()) *Timer { return &Timer{s: s, f: f, index: -1} }

// Reset schedules t at model time at, moving it if it was pending.
func (t *Timer) Reset(at time.Duration) {
	t.Stop()
	s := t.s
	s.seq++
	t.at, t.seq, t.from, t.origin = max(at, s.now), s.seq, s.now, 0
	heap.Push(&s.events, t)
}

// SetRank orders the timer among events due at the same time: lower ranks run
// first, whenever they were scheduled; events of equal rank run in the order
// they were scheduled. At and NewTimer give rank 0; set it while the
// timer is not pending. A model whose outcome
// depends on the order of simultaneous events (two ATM links delivering
// cells to one switch in the same nanosecond) ranks its timers, so that the
// order is the model's, not its events' history.
func (t *Timer) SetRank(r uint64) { t.rank = r }

// After schedules f d after now.
func (s *Scheduler) After(d time.Duration, f func()) *Timer { return s.At(s.now+d, f) }

// Next returns the time of the earliest pending event.
func (s *Scheduler) Next() (time.Duration, bool) {
	if len(s.events) == 0 {
		return 0, false
	}
	return s.events[0].at, true
}

// Scheduled returns how many events have been scheduled (At, AtFrom,
// Reset): a run's event count, for its cost per event.
func (s *Scheduler) Scheduled() uint64 { return s.seq }

// Pending returns the number of scheduled events.
func (s *Scheduler) Pending() int { return len(s.events) }

// Step runs the earliest event, moving the clock to its time. It returns
// false when no event is pending.
func (s *Scheduler) Step() bool {
	if len(s.events) == 0 {
		return false
	}
	tm := heap.Pop(&s.events).(*Timer)
	tm.index = -1
	s.now = tm.at
	tm.f()
	return true
}

// RunUntil runs every event due at or before t, each at its own time, and
// leaves the clock at t. A real-time driver calls it with the wall clock:
// late events still run at their own model time, so departures stay exact.
func (s *Scheduler) RunUntil(t time.Duration) {
	for len(s.events) > 0 && s.events[0].at <= t {
		s.Step()
	}
	if t > s.now {
		s.now = t
	}
}

// RunBefore runs every event due before t (not at t), each at its own
// time, and leaves the clock at t: a part of a split lab that follows a
// test's lead stops so at the lead's end (package emulator/sched/parallel),
// since what another part hands in may be due at t itself and order
// before this part's own events at t.
func (s *Scheduler) RunBefore(t time.Duration) {
	for len(s.events) > 0 && s.events[0].at < t {
		s.Step()
	}
	if t > s.now {
		s.now = t
	}
}

// RunDue runs at most n of the events due at or before t, each at its own
// time, and returns how many it ran and whether that was all of them; only
// then does the clock move to t. A real-time driver that must stay
// responsive when the model needs more CPU than the wall clock gives (a
// broadcast storm) bounds its work per pass with it: RunUntil would chase a
// wall clock it never catches.
func (s *Scheduler) RunDue(t time.Duration, n int) (ran int, all bool) {
	for ; ran < n && len(s.events) > 0 && s.events[0].at <= t; ran++ {
		s.Step()
	}
	if len(s.events) > 0 && s.events[0].at <= t {
		return ran, false
	}
	if t > s.now {
		s.now = t
	}
	return ran, true
}

// RunFor runs events for d of model time.
func (s *Scheduler) RunFor(d time.Duration) { s.RunUntil(s.now + d) }

// Run drains the queue in virtual time.
func (s *Scheduler) Run() {
	for s.Step() {
	}
}

type eventHeap []*Timer

func (h eventHeap) Len() int { return len(h) }
func (h eventHeap) Less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	if h[i].rank != h[j].rank {
		return h[i].rank < h[j].rank
	}
	if h[i].from != h[j].from {
		return h[i].from < h[j].from
	}
	if h[i].origin != h[j].origin {
		return h[i].origin < h[j].origin
	}
	return h[i].seq < h[j].seq
}
func (h eventHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}
func (h *eventHeap) Push(x any) {
	t := x.(*Timer)
	t.index = len(*h)
	*h = append(*h, t)
}
func (h *eventHeap) Pop() any {
	old := *h
	n := len(old)
	t := old[n-1]
	old[n-1] = nil
	*h = old[:n-1]
	return t
}
