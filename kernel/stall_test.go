//go:build linux

package kernel

import (
	"context"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/atmlab/atmlab/control"
	"github.com/atmlab/atmlab/netstat"
)

// fakeCounters reads counters that grow with the clock: the thread ran half
// of the time and waited a quarter, was switched on once a millisecond, and
// the process finished a collection at 30 ms; the hypervisor stole a tenth
// of the time from 50 ms on.
func fakeCounters(at time.Duration) counters {
	c := counters{at: at, ran: at / 2, waited: at / 4, switches: uint64(at / time.Millisecond)}
	if at >= 30*time.Millisecond {
		c.gcs = 1
	}
	if at >= 50*time.Millisecond {
		c.steal = (at - 50*time.Millisecond) / 10
	}
	return c
}

// A spell of more than StallMin between two readings of an awake loop's
// clock is a stall, its figures the counters' differences from their last
// reading to its end; a spell the loop slept is none, nor one of StallMin.
// No reading is taken as the loop wakes from a quiet spell: the second
// stall's figures begin at the end of the first.
func TestStallsRecordTheSpellAndItsCounters(t *testing.T) {
	var s stalls
	ms := time.Millisecond
	s.start(0, fakeCounters)
	s.awake(ms/2, false)
	s.awake(ms/2+StallMin, false) // exactly StallMin: none
	s.awake(12*ms, false)         // 10.5 ms: a stall
	s.slept(60*ms, false)         // meant
	s.awake(60*ms+ms/2, false)
	s.awake(70*ms, false) // 9.5 ms, the last reading at 12 ms
	want := []netstat.Stall{
		{At: ms/2 + StallMin, Len: 12*ms - (ms/2 + StallMin), Window: 12 * ms, Ran: 6 * ms, Waited: 3 * ms, Switches: 12},
		{At: 60*ms + ms/2, Len: 9*ms + ms/2, Window: 58 * ms, Ran: 29 * ms, Waited: 29 * ms / 2, Switches: 58, GCs: 1, Steal: 2 * ms},
	}
	got := s.list()
	if s.count != 2 || len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("count %d, stalls %+v, want %+v", s.count, got, want)
	}
}

// The counters are read at most every stallEvery while the loop is in
// time, so that a stall's window begins at most that long before it; the
// collection at 30 ms falls in the window of a stall that begins at 35 ms.
func TestStallsReadTheCountersEveryFewMilliseconds(t *testing.T) {
	var s stalls
	ms := time.Millisecond
	reads := 0
	s.start(0, func(at time.Duration) counters { reads++; return fakeCounters(at) })
	for at := ms / 2; at <= 35*ms; at += ms / 2 {
		s.awake(at, false)
	}
	if reads != 4 { // at 0, 10, 20 and 30 ms
		t.Fatalf("%d readings in 35 ms, want 4", reads)
	}
	s.awake(45*ms, false)
	if got := s.list(); len(got) != 1 || got[0].Window != 15*ms || got[0].GCs != 0 || s.last.at != 45*ms {
		t.Fatalf("stalls %+v, last reading at %v", got, s.last.at)
	}
	s = stalls{}
	s.start(25*ms, fakeCounters)
	s.awake(40*ms, false)
	if got := s.list(); len(got) != 1 || got[0].GCs != 1 || got[0].Window != 15*ms {
		t.Fatalf("the stall over the collection: %+v", got)
	}
}

// The counters' reading, ~50 µs after a quiet spell, waits until the
// frames that ended the spell are served and stallEvery has passed: a
// ping a second after the last is read and answered first. A reading due
// when frames come waits for their pass.
func TestStallsTakeNoReadingOnTheWayToWhatEndedAQuietSpell(t *testing.T) {
	var s stalls
	var reads []time.Duration
	s.start(0, func(at time.Duration) counters { reads = append(reads, at); return fakeCounters(at) })
	ms := time.Millisecond
	for at := ms / 2; at <= 5*ms; at += ms / 2 {
		s.awake(at, false) // busy
	}
	s.slept(1000*ms, true)         // a ping's request woke it
	s.awake(1000*ms+ms/2, false)   // the pass that wrote it to the far host
	s.slept(1000*ms+ms, true)      // the reply, while it lingered
	s.awake(1000*ms+3*ms/2, false) // the pass that wrote the reply
	s.slept(1005*ms, false)        // polling idle
	if want := []time.Duration{0}; !slices.Equal(reads, want) {
		t.Fatalf("readings at %v, want %v: none on the way to the ping's frames", reads, want)
	}
	s.slept(1010*ms, false) // idle, a reading due
	s.slept(1015*ms, false)
	s.slept(1020*ms, true) // due again as frames came
	s.awake(1020*ms+ms/2, false)
	if want := []time.Duration{0, 1010 * ms, 1020*ms + ms/2}; !slices.Equal(reads, want) {
		t.Fatalf("readings at %v, want %v", reads, want)
	}
	if s.count != 0 {
		t.Fatalf("%d stalls in a loop that only slept and served", s.count)
	}
}

// The loop keeps its latest StallKeep stalls and its longest StallKeep,
// each once, oldest first, and counts them all: a long stall is kept
// however many short ones come after it.
func TestStallsKeepTheLatestAndTheLongest(t *testing.T) {
	var s stalls
	s.start(0, fakeCounters)
	ms := time.Millisecond
	at := time.Duration(0)
	stall := func(l time.Duration) {
		s.awake(at, false)
		at += l
		s.awake(at, false)
	}
	stall(40 * ms)
	stall(30 * ms)
	for range 2 * StallKeep {
		stall(2 * ms)
	}
	got := s.list()
	// The latest 32, the two long ones and 30 of the 2 ms ones (the
	// first 30: a stall only as long as the shortest kept is not kept).
	if s.count != 2*StallKeep+2 || len(got) != 2*StallKeep || got[0].Len != 40*ms || got[1].Len != 30*ms || got[1].At != 40*ms || got[2].At != 70*ms {
		t.Fatalf("count %d, %d kept, the first three %+v", s.count, len(got), got[:3])
	}
	for i := 1; i < len(got); i++ {
		if got[i].At <= got[i-1].At {
			t.Fatalf("stall %d at %v after one at %v", i, got[i].At, got[i-1].At)
		}
	}
	if last := got[len(got)-1]; last.At != at-2*ms {
		t.Fatalf("the last kept at %v, want the latest at %v", last.At, at-2*ms)
	}
}

func TestFieldsOfSchedstatAndProcStat(t *testing.T) {
	if got := fields([]byte("123456 789 42\n"), 3); got != [8]uint64{123456, 789, 42} {
		t.Errorf("schedstat: %v", got)
	}
	if got := fields([]byte("  31162 13882 20783 37272 338 0 489 7 0 0\ncpu0 1 2 3"), 8); got != [8]uint64{31162, 13882, 20783, 37272, 338, 0, 489, 7} {
		t.Errorf("/proc/stat's cpu line: %v", got)
	}
	if got := fields([]byte("5 6\n7 8"), 3); got != [8]uint64{5, 6} {
		t.Errorf("a short first line: %v", got)
	}
}

// fields reads whatever a /proc file holds without failing: never more
// than the n numbers asked for, and the first line's numbers as written
// when they fit in 64 bits.
func FuzzFields(f *testing.F) {
	f.Add([]byte("123456 789 42\n"), uint8(3))
	f.Add([]byte("  31162 13882 20783 37272 338 0 489 7 0 0\ncpu0 1 2 3"), uint8(8))
	f.Add([]byte("5 6\n7 8"), uint8(3))
	f.Fuzz(func(t *testing.T, b []byte, n uint8) {
		k := int(n % 9)
		got := fields(b, k)
		for i := k; i < 8; i++ {
			if got[i] != 0 {
				t.Fatalf("fields(%q, %d) = %v: a number past the %d asked for", b, k, got, k)
			}
		}
		line, _, _ := strings.Cut(string(b), "\n")
		words := strings.FieldsFunc(line, func(r rune) bool { return r < '0' || r > '9' })
		for i := 0; i < k && i < len(words); i++ {
			if v, err := strconv.ParseUint(words[i], 10, 64); err == nil && got[i] != v {
				t.Fatalf("fields(%q, %d) = %v: number %d is %d", b, k, got, i, v)
			}
		}
	})
}

// The loop's own thread's counters: a call that sleeps 30 ms on the loop
// goroutine is a stall of at least that in which the thread slept; one
// that works 30 ms is one in which it ran or waited for a CPU; one that
// collects garbage and sleeps counts the collection.
func TestLoopRecordsItsStalls(t *testing.T) {
	loop, _, _ := fakeTAPs(t, abLab)
	stall := func(f func()) netstat.Stall {
		t.Helper()
		var st control.LoopStats
		loop.Query(context.Background(), func() { st = loop.Stats() })
		loop.Query(context.Background(), f)
		var after control.LoopStats
		loop.Query(context.Background(), func() { after = loop.Stats() })
		in := netstat.StallsIn(after.Stalls, st.Uptime, after.Uptime)
		if len(in) == 0 || in[0].Len < 30*time.Millisecond {
			t.Fatalf("stalls %+v, want one of at least 30 ms", in)
		}
		if after.GCCycles < st.GCCycles {
			t.Fatalf("GC cycles went from %d to %d", st.GCCycles, after.GCCycles)
		}
		return in[0]
	}
	if s := stall(func() { time.Sleep(30 * time.Millisecond) }); s.Off() < 25*time.Millisecond || s.Cause() != "its thread slept: parked by Go's runtime, or blocked in the kernel" {
		t.Errorf("a sleep: %v", s)
	}
	if s := stall(func() {
		for end := time.Now().Add(30 * time.Millisecond); time.Now().Before(end); {
		}
	}); s.Ran+s.Waited < 25*time.Millisecond {
		t.Errorf("work: %v", s)
	}
	if s := stall(func() { runtime.GC(); time.Sleep(30 * time.Millisecond) }); s.GCs < 1 || s.Cause() != "Go's runtime parked its thread during a garbage collection" {
		t.Errorf("a collection: %v", s)
	}
}
