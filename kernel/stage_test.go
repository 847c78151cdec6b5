package kernel

import (
	"slices"
	"testing"
	"time"

	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/emulator/units"
)

// dateBack moves each frame of a batch to the latest time the bucket lets
// it have entered the TAP: at 100M a 1514-octet frame bills 1538 octets,
// 123.04 µs; the last three (the burst) keep their pass.
func TestDateBack(t *testing.T) {
	const pass, end = 50 * time.Millisecond, 50*time.Millisecond + 10*time.Microsecond
	const wire = 123040 * time.Nanosecond
	b := &bucket{rate: 100 * units.Mbps, burst: 3 * 1538, frame: 1538, cost: func(n int) int { return n + 24 }}
	cases := []struct {
		name   string
		before time.Duration // the Born of a frame staged ahead of the batch (0: none)
		floor  time.Duration
		want   []time.Duration
	}{
		{"free", 0, 0, []time.Duration{
			end - 3*wire + bucketSlack, end - 2*wire + bucketSlack, end - wire + bucketSlack, pass, pass, pass}},
		{"floor", 0, end - 2*wire - time.Microsecond, []time.Duration{
			end - 2*wire - time.Microsecond, end - 2*wire + bucketSlack, end - wire + bucketSlack, pass, pass, pass}},
		{"staged ahead", end - 2*wire, 0, []time.Duration{
			end - 2*wire, end - 2*wire + bucketSlack, end - wire + bucketSlack, pass, pass, pass}},
	}
	for _, c := range cases {
		var s stage
		if c.before > 0 {
			s.push(&emulator.Frame{Data: make([]byte, 1514), Born: c.before})
		}
		for range 6 {
			s.push(&emulator.Frame{Data: make([]byte, 1514), Born: pass})
		}
		s.dateBack(6, end, c.floor, b)
		if c.before > 0 {
			s.pop()
		}
		for i, want := range c.want {
			if got := s.pop().Born; got != want {
				t.Errorf("%s: frame %d dated %v, want %v", c.name, i, got, want)
			}
		}
	}
}

// floodStage drives a stage as the loop does when the model needs more
// CPU than it gets, in a fake clock: each 1 ms pass the host offers 100
// frames (its link's rate: one frame per 10 µs of model time) and the
// loop reads what its stage has room for, stamped with the pass; then the
// model runs up to the pass's wall time, but the loop has the CPU to put
// only 50 frames through the one-frame ring a pass. It returns the frames
// held back and carried, how many waited in the TAP at the end, and how
// far behind the wall clock each carried frame entered the ring.
func floodStage(bound time.Duration, passes int) (held, carried uint64, tap int, late []time.Duration) {
	const wire, offered, cpu = 10 * time.Microsecond, 100, 50
	var s stage
	var model time.Duration // the ring's next room, in model time
	ringFull := false
	in := func(*emulator.Frame) { ringFull = true }
	room := func() bool { return !ringFull }
	waiting := 0 // in the host's TAP
	for p := 1; p <= passes; p++ {
		wall := time.Duration(p) * time.Millisecond
		waiting += offered
		for ; waiting > 0 && !s.full(); waiting-- {
			s.push(&emulator.Frame{Data: make([]byte, 64), Born: wall})
		}
		for n := 0; n < cpu && model <= wall; {
			if at, wait := s.enter(model, wall, bound, room, in); wait {
				model = at // the ring stands idle in the model until then
				continue
			}
			if !ringFull {
				break // nothing staged
			}
			late = append(late, wall-model)
			ringFull = false // it leaves one wire time later
			model += wire
			carried++
			n++
		}
	}
	return s.late, carried, waiting, late
}

// Two 1G floods took more CPU than the loop had: its stage filled
// (33 ms of frames at 1G) and the model fell as far behind as the stage
// took to drain at the rate the loop kept up, 92 ms at the median. With a
// bound, frames that would enter the ring more than the bound behind the
// wall clock are held back to the bound and counted, and the rest waits
// in the TAP: the loop carries what its CPU allows, never later than the
// bound.
//
// The host offers 20,000 frames over 200 passes; pass 1 carries one frame
// (the model reaches the frames' pass, 1 ms, and then the wall clock),
// every later pass the 50 the CPU allows: 9,951. The latest enters
// exactly the bound behind; 13,245 frames are held back (each counted
// once), 4,046 are staged at the end and 6,003 wait in the TAP. Without
// a bound the same load ran 80.96 ms behind: the stage's 4,096 frames
// drained at 50 a pass.
func TestStageHoldsBackWhatWouldEnterLaterThanTheBound(t *testing.T) {
	const bound, passes = 5 * time.Millisecond, 200
	held, carried, tap, late := floodStage(bound, passes)
	if held != 13245 || carried != 1+50*199 || tap != 6003 {
		t.Errorf("held back %d, carried %d, %d left in the TAP; want 13245, %d, 6003", held, carried, tap, 1+50*199)
	}
	if worst := slices.Max(late); worst != bound {
		t.Errorf("the latest frame entered the ring %v behind the wall clock, want the bound, %v", worst, bound)
	}
	held, _, _, late = floodStage(0, passes)
	if worst := slices.Max(late); held != 0 || worst != 80960*time.Microsecond {
		t.Errorf("without a bound: held %d, latest %v behind; want none and 80.96ms", held, worst)
	}
}
