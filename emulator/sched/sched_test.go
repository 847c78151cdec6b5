package sched

import (
	"fmt"
	"testing"
	"time"
)

func TestOrderAndTies(t *testing.T) {
	s := New()
	var got []string
	s.At(20, func() { got = append(got, "b@20") })
	s.At(10, func() { got = append(got, "a@10") })
	s.At(20, func() { got = append(got, "c@20") })
	s.At(10, func() {
		got = append(got, "d@10")
		s.After(0, func() { got = append(got, "e@10") })
	})
	s.Run()
	want := []string{"a@10", "d@10", "e@10", "b@20", "c@20"}
	if len(got) != len(want) {
		t.Fatalf("ran %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("ran %v, want %v", got, want)
		}
	}
	if s.Now() != 20 {
		t.Fatalf("Now() = %v, want 20ns", s.Now())
	}
}

func TestStopAndRunUntil(t *testing.T) {
	s := New()
	ran := 0
	a := s.At(5*time.Microsecond, func() { ran++ })
	b := s.At(7*time.Microsecond, func() { ran += 10 })
	if !a.Stop() || a.Stop() {
		t.Fatal("Stop() should report true once, then false")
	}
	s.RunUntil(6 * time.Microsecond)
	if ran != 0 || s.Now() != 6*time.Microsecond || !b.Pending() {
		t.Fatalf("after RunUntil(6µs): ran=%d now=%v pending=%v", ran, s.Now(), b.Pending())
	}
	// A late real-time driver: the event still runs at its own time.
	var at time.Duration
	s.At(8*time.Microsecond, func() { at = s.Now() })
	s.RunUntil(time.Millisecond)
	if ran != 10 || at != 8*time.Microsecond || s.Now() != time.Millisecond {
		t.Fatalf("ran=%d at=%v now=%v", ran, at, s.Now())
	}
	if _, ok := s.Next(); ok {
		t.Fatal("Next() reports an event after draining")
	}
	// Scheduling in the past never moves the clock back.
	s.At(0, func() { at = s.Now() })
	s.Run()
	if at != time.Millisecond {
		t.Fatalf("past event ran at %v, want 1ms", at)
	}
}

// A reused timer runs once per Reset, at the time of the latest Reset, in
// order with other events.
func TestTimerReset(t *testing.T) {
	s := New()
	var got []string
	tm := s.NewTimer(func() { got = append(got, "timer@"+s.Now().String()) })
	if tm.Pending() {
		t.Fatal("a new timer is pending")
	}
	tm.Reset(5)
	tm.Reset(3) // moves it
	s.At(3, func() { got = append(got, "event@3ns") })
	s.Run()
	tm.Reset(10)
	s.Run()
	want := []string{"timer@3ns", "event@3ns", "timer@10ns"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	n := 0
	counter := s.NewTimer(func() { n++ })
	if testing.AllocsPerRun(100, func() { counter.Reset(s.Now() + 1); s.Run() }) != 0 || n == 0 {
		t.Error("Reset allocates")
	}
}

// RunDue stops after n events, leaving the clock at the last one's time
// until every due event has run.
func TestRunDue(t *testing.T) {
	s := New()
	var ran []time.Duration
	for i := 1; i <= 5; i++ {
		s.At(time.Duration(i), func() { ran = append(ran, s.Now()) })
	}
	check := func(t time.Duration, n, wantRan int, wantAll bool, wantNow time.Duration) {
		if got, all := s.RunDue(t, n); got != wantRan || all != wantAll || s.Now() != wantNow {
			panic(fmt.Sprintf("RunDue(%v, %d) = %d, %v with clock %v; want %d, %v, %v", t, n, got, all, s.Now(), wantRan, wantAll, wantNow))
		}
	}
	defer func() {
		if p := recover(); p != nil {
			t.Fatal(p)
		}
	}()
	check(4, 2, 2, false, 2)
	check(4, 2, 2, true, 4)
	check(10, 5, 1, true, 10)
	check(20, 0, 0, true, 20)
	if len(ran) != 5 || ran[4] != 5 {
		t.Fatalf("events ran at %v, want 1ns..5ns", ran)
	}
}

// At one time, lower ranks run first whatever order they were scheduled
// in; equal ranks keep their order.
func TestRankOrdersTies(t *testing.T) {
	s := New()
	var got []string
	mk := func(name string, rank uint64) *Timer {
		tm := s.NewTimer(func() { got = append(got, name) })
		tm.SetRank(rank)
		return tm
	}
	late, early, plain := mk("rank2", 2), mk("rank1", 1), mk("rank1b", 1)
	late.Reset(10)
	early.Reset(10)
	plain.Reset(10)
	s.At(10, func() { got = append(got, "rank0") })
	s.At(5, func() { got = append(got, "first") })
	s.Run()
	if fmt.Sprint(got) != "[first rank0 rank1 rank1b rank2]" {
		t.Fatalf("ran %v", got)
	}
}

// An event handed in from another scheduler (AtFrom) runs among those due
// at its time by the instant it was scheduled at: after this scheduler's
// own scheduled before or at that instant, before those scheduled later,
// whenever it was handed in; by origin, then in the order handed in.
func TestAtFromOrdersByInstantThenOrigin(t *testing.T) {
	s := New()
	var got []string
	log := func(name string) func() { return func() { got = append(got, name) } }
	s.At(50, log("own@0"))
	s.At(10, func() { s.At(50, log("own@10")) })
	s.At(30, func() {
		s.At(50, log("own@30"))
		s.AtFrom(50, 10, 2, log("cut2@10"))
		s.AtFrom(50, 10, 1, log("cut1@10 first"))
		s.AtFrom(50, 10, 1, log("cut1@10 second"))
		s.AtFrom(50, 20, 1, log("cut1@20"))
		s.AtFrom(50, 0, 1, log("cut1@0"))
	})
	s.Run()
	want := []string{"own@0", "cut1@0", "own@10", "cut1@10 first", "cut1@10 second", "cut2@10", "cut1@20", "own@30"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("ran %q, want %q", got, want)
	}
}
