package atm

import (
	"math"
	"testing"
	"time"

	"github.com/atmlab/atmlab/cells"
	"github.com/atmlab/atmlab/emulator/sched"
)

// cellCount counts the cells a link delivers.
type cellCount struct{ n int }

func (c *cellCount) ReceiveCell(*cells.Cell) { c.n++ }

// delay: 1h at OC-3c line rate holds DefaultLimit cells in the pipe, not an
// hour of cells: the rest are counted as limit drops, in trains and cell by
// cell alike, and the pipe takes cells again once it has drained.
func TestPipeLimit(t *testing.T) {
	const sent = DefaultLimit + 58_000
	for _, perCell := range []bool{false, true} {
		s := sched.New()
		sink := &cellCount{}
		l := NewCellLink(s, LinkConfig{PHY: PHYs["oc3"], Delay: time.Hour, PerCell: perCell}, sink)
		var c cells.Cell
		high := 0
		for range sent {
			l.Send(&c, 0) // back to back: the transmitter sends one per slot
			high = max(high, l.pipe.Len(), l.flight.Len())
		}
		for next, ok := s.Next(); ok && next <= time.Hour; next, ok = s.Next() {
			s.Step()
			high = max(high, l.pipe.Len(), l.flight.Len())
		}
		if st := l.Stats(); st.TxCells != sent || st.LimitDrops != sent-DefaultLimit || st.LostCells != 0 || sink.n != 0 {
			t.Errorf("perCell %v: before the delay: %+v, %d delivered", perCell, st, sink.n)
		}
		if high > DefaultLimit {
			t.Errorf("perCell %v: the pipe held %d cells, limit %d", perCell, high, DefaultLimit)
		}
		s.Run()
		if st := l.Stats(); st.Delivered != DefaultLimit || sink.n != DefaultLimit {
			t.Errorf("perCell %v: delivered %d (%d), want %d", perCell, st.Delivered, sink.n, DefaultLimit)
		}
		for range 1000 {
			l.Send(&c, 0)
		}
		s.Run()
		if st := l.Stats(); st.Delivered != DefaultLimit+1000 || st.LimitDrops != sent-DefaultLimit {
			t.Errorf("perCell %v: after draining: %+v", perCell, st)
		}
	}
}

// A limit counts only cells still in flight: with no delay nothing is in
// flight when the next cell leaves, so a limit of 1 drops nothing; with a
// delay of exactly 3 slots and a limit of 3, the cell sent 3 slots earlier
// arrives as the next leaves, so none is dropped; 1 ns more, and the fourth
// cell finds three in flight: every fourth cell from the fourth is dropped
// (3, 7, ... 27 of 30).
func TestPipeLimitInFlight(t *testing.T) {
	phy := PHYs["atm25"] // 16875 ns slots, exact
	for _, perCell := range []bool{false, true} {
		for _, tc := range []struct {
			delay        time.Duration
			limit        int
			drops, deliv uint64
		}{
			{0, 1, 0, 30},
			{3 * 16875, 3, 0, 30}, // the cell sent 3 slots earlier arrives as this one leaves
			{3*16875 + 1, 3, 7, 23},
		} {
			s := sched.New()
			sink := &cellCount{}
			l := NewCellLink(s, LinkConfig{PHY: phy, Delay: tc.delay, Limit: tc.limit, PerCell: perCell}, sink)
			var c cells.Cell
			for range 30 {
				l.Send(&c, 0)
			}
			s.Run()
			if st := l.Stats(); st.LimitDrops != tc.drops || st.Delivered != tc.deliv || uint64(sink.n) != tc.deliv {
				t.Errorf("perCell %v, delay %v, limit %d: %+v, want %d limit drops, %d delivered", perCell, tc.delay, tc.limit, st, tc.drops, tc.deliv)
			}
		}
	}
}

// Jitter and delay of any size neither panic nor wrap: arrival times
// saturate at the largest time and cells keep their order.
func TestHugeJitter(t *testing.T) {
	for _, perCell := range []bool{false, true} {
		s := sched.New()
		log := &cellLog{s: s}
		l := NewCellLink(s, LinkConfig{PHY: PHYs["oc3"], Delay: math.MaxInt64 / 2, Jitter: math.MaxInt64, PerCell: perCell, Seed: 1}, log)
		var c cells.Cell
		for i := range 10 {
			c[5] = byte(i)
			l.Send(&c, 0)
		}
		s.Run()
		if len(log.cells) != 10 {
			t.Fatalf("perCell %v: %d cells delivered, want 10", perCell, len(log.cells))
		}
		for i := range log.cells {
			if log.cells[i][5] != byte(i) || (i > 0 && log.times[i] < log.times[i-1]) || log.times[i] < 0 {
				t.Errorf("perCell %v: cell %d: payload %d at %v", perCell, i, log.cells[i][5], log.times[i])
			}
		}
	}
}
