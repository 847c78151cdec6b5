package emutest

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/atmlab/atmlab/cells"
	"github.com/atmlab/atmlab/emulator/atm"
	"github.com/atmlab/atmlab/emulator/sched"
)

// CellTransmitter is what sends an ATM port's cells: an atm.CellLink.
type CellTransmitter interface {
	Send(c *cells.Cell, notBefore time.Duration) bool
	Full() bool
	Stats() atm.LinkStats
}

// CellSubject builds one cell transmitter for the suite.
type CellSubject struct {
	Name string
	// New returns the transmitter on s, refusing cells once queue of them
	// are held, delivering to rx.
	New func(s *sched.Scheduler, queue int, rx atm.CellReceiver) CellTransmitter
	// Trains has the receiver take trains (atm.TrainReceiver) rather than
	// one cell at a time.
	Trains bool
	// Lossy subjects lose cells on the line and at the pipe's limit: both
	// must be seen and account for every cell sent but not delivered.
	Lossy bool
}

// CellRecorder keeps the sequence numbers of the cells it is handed (see
// Cell) and when each arrived.
type CellRecorder struct {
	S      *sched.Scheduler
	Trains bool
	Seqs   []int
	Times  []time.Duration
}

// ReceiveCell implements atm.CellReceiver.
func (r *CellRecorder) ReceiveCell(c *cells.Cell) { r.take(c, r.S.Now()) }

// AcceptsTrains implements atm.TrainReceiver.
func (r *CellRecorder) AcceptsTrains() bool { return r.Trains }

// ReceiveTrain implements atm.TrainReceiver.
func (r *CellRecorder) ReceiveTrain(train []atm.Arrival) {
	for i := range train {
		r.take(&train[i].Cell, train[i].At)
	}
}

func (r *CellRecorder) take(c *cells.Cell, at time.Duration) {
	r.Seqs = append(r.Seqs, CellSeq(c))
	r.Times = append(r.Times, at)
}

// Cell returns test cell seq: VPI/VCI 0/100, its payload starting with seq.
func Cell(seq int) *cells.Cell {
	var c cells.Cell
	cells.Header{VCI: 100}.Put(c[:], cells.UNI)
	binary.BigEndian.PutUint32(c[cells.HeaderSize:], uint32(seq))
	return &c
}

// CellSeq returns the sequence number a test cell carries.
func CellSeq(c *cells.Cell) int { return int(binary.BigEndian.Uint32(c[cells.HeaderSize:])) }

// Cells runs the cell transmitters' conformance suite on sub: FIFO order,
// Full agrees with Send, and every cell sent is delivered or counted.
func Cells(t *testing.T, sub CellSubject) {
	t.Run("fifo", func(t *testing.T) {
		s := sched.New()
		rx := &CellRecorder{S: s, Trains: sub.Trains}
		cs := &cellSender{t: t, tx: sub.New(s, 1000, rx)}
		rng := rand.New(rand.NewPCG(3, 4))
		at := time.Duration(0)
		for range 60 {
			at += time.Duration(rng.IntN(40)) * time.Microsecond
			s.At(at, func() {
				for range 1 + rng.IntN(10) {
					cs.send(time.Duration(rng.IntN(5)) * time.Microsecond)
				}
			})
		}
		drain(t, s)
		if cs.refused != 0 {
			t.Errorf("%d cells refused with room for 1000", cs.refused)
		}
		cs.check(rx, sub.Lossy)
	})
	t.Run("full", func(t *testing.T) {
		s := sched.New()
		rx := &CellRecorder{S: s, Trains: sub.Trains}
		cs := &cellSender{t: t, tx: sub.New(s, 4, rx)}
		for k := range 30 {
			s.At(time.Duration(k)*5*time.Microsecond, func() {
				for range 6 {
					cs.send(0)
				}
			})
		}
		drain(t, s)
		if cs.refused == 0 {
			t.Errorf("a queue of 4 refused none of %d cells in bursts of 6", cs.next)
		}
		cs.check(rx, false)
	})
}

type cellSender struct {
	t        *testing.T
	tx       CellTransmitter
	next     int
	accepted []int
	refused  int
}

func (cs *cellSender) send(notBefore time.Duration) {
	full := cs.tx.Full()
	ok := cs.tx.Send(Cell(cs.next), notBefore)
	if ok == full {
		cs.t.Errorf("cell %d: Full said %v, Send returned %v", cs.next, full, ok)
	}
	if ok {
		cs.accepted = append(cs.accepted, cs.next)
	} else {
		cs.refused++
	}
	cs.next++
}

func (cs *cellSender) check(rx *CellRecorder, seeBoth bool) {
	t := cs.t
	t.Helper()
	st := cs.tx.Stats()
	if st.TxCells != uint64(len(cs.accepted)) || st.QueueDrops != uint64(cs.refused) {
		t.Errorf("Stats: %d cells sent, %d queue drops; accepted %d, refused %d", st.TxCells, st.QueueDrops, len(cs.accepted), cs.refused)
	}
	if st.Delivered != uint64(len(rx.Seqs)) {
		t.Errorf("Stats: %d delivered; the receiver got %d", st.Delivered, len(rx.Seqs))
	}
	if seeBoth && (st.LostCells == 0 || st.LimitDrops == 0) {
		t.Errorf("lossy subject: %d lost and %d limit drops; the test should see both", st.LostCells, st.LimitDrops)
	}
	if st.Delivered+st.LostCells+st.LimitDrops != st.TxCells {
		t.Errorf("%d delivered + %d lost + %d at the limit != %d sent", st.Delivered, st.LostCells, st.LimitDrops, st.TxCells)
	}
	inOrder(t, "cell", cs.accepted, rx.Seqs, rx.Times)
}
