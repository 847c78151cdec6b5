package atm

import (
	"testing"
	"time"

	"github.com/atmlab/atmlab/cells"
	"github.com/atmlab/atmlab/emulator/sched"
)

// setRun queues 10 numbered cells at 0 on an OC-3c link with a 1 ms cell
// delay, changes the link with change at 10 µs (three cells have left,
// seven wait), queues 10 more at 20 µs, and returns each cell's number and
// arrival, in arrival order.
func setRun(t *testing.T, perCell bool, change func(*LinkConfig)) ([]byte, []time.Duration, LinkStats) {
	t.Helper()
	s := sched.New()
	log := &cellLog{s: s}
	l := NewCellLink(s, LinkConfig{PHY: PHYs["oc3"], Delay: time.Millisecond, Seed: 1, PerCell: perCell}, log)
	send := func(from byte) {
		for i := range byte(10) {
			var c cells.Cell
			c[cells.HeaderSize] = from + i
			l.Send(&c, 0)
		}
	}
	send(0)
	s.RunUntil(10 * time.Microsecond)
	cfg := l.Config()
	change(&cfg)
	l.SetConfig(cfg)
	s.RunUntil(20 * time.Microsecond)
	send(10)
	s.Run()
	var seq []byte
	for _, c := range log.cells {
		seq = append(seq, c[cells.HeaderSize])
	}
	return seq, log.times, l.Stats()
}

// slotEnd is OC-3c's slot k's end: 424 bits at 149.76 Mbit/s.
func slotEnd(k int64) time.Duration { return PHYs["oc3"].SlotEnd(k) }

// TestSetDelay: delay 1 ms -> 0 at 10 µs. In trains the cells queued
// before the change (slots 0 to 9) keep their 1 ms; the ten queued at 20 µs
// take slots 10 to 19 (slot 9 ends at 28.3 µs) and arrive just behind the
// last old cell, at its departure + 1 ms, in order, none lost. Stepping
// cell by cell the change applies to the cells that leave after it: cells
// 3 to 19 arrive behind cell 2.
func TestSetDelay(t *testing.T) {
	for _, perCell := range []bool{false, true} {
		seq, at, st := setRun(t, perCell, func(c *LinkConfig) { c.Delay = 0 })
		if len(seq) != 20 || st.LostCells != 0 || st.Delivered != 20 {
			t.Fatalf("perCell %v: %d cells delivered, stats %+v", perCell, len(seq), st)
		}
		old := 10 // cells that keep the old delay
		if perCell {
			old = 3
		}
		for i := range seq {
			if seq[i] != byte(i) {
				t.Fatalf("perCell %v: reordered: %v", perCell, seq)
			}
			want := slotEnd(int64(i)) + time.Millisecond
			if i >= old {
				// Behind the last cell with the old delay: the line keeps order.
				want = slotEnd(int64(old-1)) + time.Millisecond
			}
			if at[i] != want {
				t.Errorf("perCell %v: cell %d arrived at %v, want %v", perCell, i, at[i], want)
			}
		}
	}
	// Delay 1 ms -> 2 ms: the new cells arrive 2 ms after leaving.
	_, at, _ := setRun(t, false, func(c *LinkConfig) { c.Delay = 2 * time.Millisecond })
	for i := range 20 {
		want := slotEnd(int64(i)) + time.Millisecond
		if i >= 10 {
			want = slotEnd(int64(i)) + 2*time.Millisecond
		}
		if at[i] != want {
			t.Errorf("delay 2ms: cell %d arrived at %v, want %v", i, at[i], want)
		}
	}
}

// TestSetCellLoss: a cell loss ratio of 1 from 10 µs loses every cell
// queued after it (in trains: the ten queued at 20 µs) and none queued or
// in flight before; stepping cell by cell, the cells leaving after it
// (cells 3 to 19). Back to 0, nothing is lost.
func TestSetCellLoss(t *testing.T) {
	for _, tc := range []struct {
		perCell bool
		want    int
	}{{false, 10}, {true, 3}} {
		seq, _, st := setRun(t, tc.perCell, func(c *LinkConfig) { c.CLR = 1 })
		if len(seq) != tc.want || int(st.LostCells) != 20-tc.want || st.TxCells != 20 {
			t.Errorf("perCell %v: %d delivered (%v), stats %+v; want %d", tc.perCell, len(seq), seq, st, tc.want)
		}
		for i := range seq {
			if seq[i] != byte(i) {
				t.Errorf("perCell %v: delivered %v", tc.perCell, seq)
			}
		}
	}
	seq, _, st := setRun(t, false, func(c *LinkConfig) { c.CLR = 0 })
	if len(seq) != 20 || st.LostCells != 0 {
		t.Errorf("CLR 0: %d delivered, %+v", len(seq), st)
	}
}

// TestSetKeeps: the PHY, propagation, seed and stepping are the link's own.
func TestSetKeeps(t *testing.T) {
	s := sched.New()
	l := NewCellLink(s, LinkConfig{PHY: PHYs["oc3"], Propagation: time.Microsecond, Seed: 7}, &cellLog{s: s})
	l.SetConfig(LinkConfig{PHY: PHYs["e3"], Propagation: time.Second, Seed: 9, PerCell: true, Delay: time.Millisecond, Jitter: time.Microsecond, CLR: 0.5, QueueCells: 100})
	got := l.Config()
	want := LinkConfig{PHY: PHYs["oc3"], Propagation: time.Microsecond, Seed: 7, Delay: time.Millisecond, Jitter: time.Microsecond, CLR: 0.5, QueueCells: 100}
	if got != want {
		t.Fatalf("config %+v, want %+v", got, want)
	}
}
