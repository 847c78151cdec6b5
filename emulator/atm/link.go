package atm

import (
	"math"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/atmlab/atmlab/cells"
	"github.com/atmlab/atmlab/emulator/internal/ring"
	"github.com/atmlab/atmlab/emulator/sched"
)

// CellReceiver takes the cells a link delivers, at the model time a cell's
// last bit arrives. The cell is valid during the call only.
type CellReceiver interface {
	ReceiveCell(c *cells.Cell)
}

// Arrival is a cell and the model time its last bit arrived.
type Arrival struct {
	Cell cells.Cell
	At   time.Duration
}

// TrainReceiver is a CellReceiver that can also take a train: cells that
// arrived one after another on one link, handed over in one call when the
// last of them arrives (the scheduler's now). It treats each cell as of its
// own arrival time, with the result cell-by-cell delivery would give, which
// holds only while nothing else acts on what the train's cells reach;
// AcceptsTrains says whether that is so. The train is valid during the call
// only.
type TrainReceiver interface {
	CellReceiver
	AcceptsTrains() bool
	ReceiveTrain(train []Arrival)
}

// LinkConfig is one direction of an ATM link.
type LinkConfig struct {
	PHY         PHY
	Propagation time.Duration
	Delay       time.Duration // cell delay added to every cell
	Jitter      time.Duration // uniform in [-Jitter, +Jitter]; cells keep their order
	CLR         float64       // cell loss ratio: each cell is lost with this probability
	QueueCells  int           // tail-drop limit of the queue, in cells; 0 = none
	Limit       int           // cells in flight in the pipe at most; 0 = DefaultLimit
	Seed        uint64
	// PerCell steps the link cell by cell, one event per cell, instead of
	// in trains: the reference the trains are tested against.
	PerCell bool
}

// DefaultLimit is the pipe's bound in cells when LinkConfig.Limit is 0:
// netem's default of 1000 packets, counted as 1000 PDUs of the 192 cells
// an AAL5 PDU of the default 9180-octet MTU takes. A long delay at line rate
// then holds 192,000 cells (0.54 s of OC-3c, about 12 MB), not everything
// sent during the delay; the cells beyond it are counted as limit drops.
const DefaultLimit = 1000 * 192

// LinkStats are a cell link's counters.
type LinkStats struct {
	TxCells    uint64 `json:"tx_cells"`    // cells whose last bit left the transmitter
	QueueDrops uint64 `json:"queue_drops"` // cells refused by a full queue
	LostCells  uint64 `json:"lost_cells"`  // cells lost on the line (the cell loss ratio)
	LimitDrops uint64 `json:"limit_drops"` // cells dropped because the pipe held its limit
	Delivered  uint64 `json:"delivered"`
	QueueHigh  int    `json:"queue_high_cells"`
	BusyTime   time.Duration
}

// CellLink is one direction of an ATM link: a FIFO of cells and a
// transmitter that sends one cell per slot of the PHY's cell clock, then a
// pipe of propagation and cell delay. Slots tile the line from model time 0,
// as on a SONET/SDH or PLCP frame, so a cell arriving at an idle link waits
// for the next slot boundary. A cell whose last bit leaves at t no longer
// holds its place in the queue at t, whatever order that instant's events
// run in.
//
// A cell's slot, its loss and its arrival time are fixed when it is queued,
// so the link moves cells in trains: the cells queued in one go (a PDU from
// an adapter, what a switch forwards of one train) cost one event when the
// last of them leaves, and reach a TrainReceiver that accepts trains in one
// call when the last of them arrives. Other receivers get one event per
// cell, at its arrival. With PerCell set the link steps cell by cell as
// hardware does, one event per departure. One timer serves each mode: no
// allocation per cell. Call every method on the scheduler goroutine.
type CellLink struct {
	s   *sched.Scheduler
	cfg LinkConfig
	dst CellReceiver
	// dst as a TrainReceiver (nil if it is none), asserted once: see
	// emulator.Channel's trainDst.
	trainDst TrainReceiver
	rng      *rand.Rand

	nextSlot int64                    // the first slot not yet used
	lastAt   time.Duration            // arrival of the last cell not lost
	pipe     ring.Ring[Arrival]       // cells in flight, in delivery order
	flight   ring.Ring[time.Duration] // arrivals of the cells sent and not yet arrived (pipeFull)

	// cell by cell (PerCell)
	queue    ring.Ring[Arrival] // At is the earliest time the cell may leave (a shaper's)
	headEnd  time.Duration      // when the head cell's last bit leaves
	tx       *sched.Timer
	pipeTick *sched.Timer
	cur      Arrival // the cell being handed on (a field: no allocation per cell)

	// trains
	occ        ring.Ring[time.Duration] // departures of the cells queued or in service
	open       batch                    // cells queued since the last flush
	sent       ring.Ring[batch]         // batches whose last cell has not left yet
	left       batch                    // the batch that has just left (a field: no allocation)
	deliveries ring.Ring[delivery]      // the pipe's cells, by how they are handed on
	tick       *sched.Timer
	train      []Arrival

	// OnSent, if set, sees a cell when its last bit leaves the transmitter:
	// in trains the last cell of each train, stepping cell by cell every
	// cell (an adapter counts the PDUs it has sent).
	OnSent func(c *cells.Cell)
	taps   []*Tap
	stats  LinkStats
	trace  func(c *cells.Cell, end time.Duration, lost bool) // tests: every cell's departure
}

// batch is the cells queued in one go.
type batch struct {
	n, lost, limited, kept int
	end                    time.Duration // the last cell's departure
	last                   cells.Cell
}

// delivery is n cells of the pipe, handed on as a train or one by one.
type delivery struct {
	n     int
	train bool
}

// linkRanks orders the events of links due at the same time (sched.Timer.
// SetRank): by creation, so cells reaching a switch in one nanosecond on
// two ports queue in the same order however the links are stepped.
var linkRanks atomic.Uint64

// NewCellLink returns a link direction that delivers to dst.
func NewCellLink(s *sched.Scheduler, cfg LinkConfig, dst CellReceiver) *CellLink {
	l := &CellLink{s: s, cfg: cfg, dst: dst, rng: rand.New(rand.NewPCG(cfg.Seed, 0x6365_6c6c))}
	l.trainDst, _ = dst.(TrainReceiver)
	l.tx = s.NewTimer(l.departed)
	l.pipeTick = s.NewTimer(l.arrive)
	l.tick = s.NewTimer(l.run)
	rank := linkRanks.Add(1)
	for _, t := range []*sched.Timer{l.tx, l.pipeTick, l.tick} {
		t.SetRank(rank)
	}
	return l
}

// Stats returns the link's counters.
func (l *CellLink) Stats() LinkStats { return l.stats }

// PHY returns the link's physical layer.
func (l *CellLink) PHY() PHY { return l.cfg.PHY }

// Queued returns the cells waiting or in service.
func (l *CellLink) Queued() int { return l.queuedAt(l.s.Now()) }

// queuedAt returns the cells waiting or in service at t, which is no earlier
// than any cell queued so far.
func (l *CellLink) queuedAt(t time.Duration) int {
	if l.cfg.PerCell {
		n := l.queue.Len()
		if n > 0 && l.headEnd <= t { // its departure is due now
			n--
		}
		return n
	}
	for l.occ.Len() > 0 && *l.occ.Peek() <= t {
		l.occ.Pop()
	}
	return l.occ.Len()
}

// Full reports whether the queue would refuse a cell now.
func (l *CellLink) Full() bool { return l.cfg.QueueCells > 0 && l.Queued() >= l.cfg.QueueCells }

// Send queues a copy of c to leave no earlier than notBefore. A cell that
// does not fit is dropped, counted, and Send returns false.
func (l *CellLink) Send(c *cells.Cell, notBefore time.Duration) bool {
	ok := l.enqueue(c, l.s.Now(), notBefore)
	l.flush()
	return ok
}

// enqueue queues a copy of c as of time t (now, or a train's cell's arrival
// time) to leave no earlier than notBefore; flush ends the train.
func (l *CellLink) enqueue(c *cells.Cell, t, notBefore time.Duration) bool {
	if l.cfg.PerCell {
		return l.sendCell(c, notBefore)
	}
	n := l.queuedAt(t)
	if l.cfg.QueueCells > 0 && n >= l.cfg.QueueCells {
		l.stats.QueueDrops++
		return false
	}
	slot := max(l.nextSlot, l.cfg.PHY.SlotAt(max(t, notBefore)))
	l.nextSlot = slot + 1
	end := l.cfg.PHY.SlotEnd(slot)
	l.stats.BusyTime += end - l.cfg.PHY.SlotStart(slot)
	l.occ.Push(end)
	l.stats.QueueHigh = max(l.stats.QueueHigh, n+1)
	b := &l.open
	b.n++
	b.end, b.last = end, *c
	limited := l.pipeFull(end)
	lost := limited || l.lose()
	if l.trace != nil {
		l.trace(c, end, lost)
	}
	if limited {
		b.limited++
		return true
	}
	if lost {
		b.lost++
		return true
	}
	b.kept++
	at := l.arrival(end)
	l.flight.Push(at)
	l.pipe.Push(Arrival{*c, at})
	return true
}

// flush ends the train being queued and schedules its events.
func (l *CellLink) flush() {
	b := l.open
	if b.n == 0 {
		return
	}
	l.open = batch{}
	l.sent.Push(b)
	if b.kept > 0 {
		train := l.trains()
		if d := l.deliveries.Len(); d > 0 && !train && !l.deliveries.At(d-1).train {
			l.deliveries.At(d - 1).n += b.kept
		} else {
			l.deliveries.Push(delivery{b.kept, train})
		}
	}
	l.schedule()
}

// trains reports whether the link hands its cells on in trains.
func (l *CellLink) trains() bool {
	return l.trainDst != nil && !l.cfg.PerCell && l.trainDst.AcceptsTrains()
}

// schedule sets the timer to the next departure of a train's last cell or
// the next delivery.
func (l *CellLink) schedule() {
	var next time.Duration
	ok := false
	if l.sent.Len() > 0 {
		next, ok = l.sent.Peek().end, true
	}
	if l.deliveries.Len() > 0 {
		d := l.deliveries.Peek()
		at := l.pipe.Peek().At
		if d.train {
			at = l.pipe.At(d.n - 1).At
		}
		if !ok || at < next {
			next, ok = at, true
		}
	}
	if ok {
		l.tick.Reset(next)
	} else {
		l.tick.Stop()
	}
}

// run counts the trains that have left and hands on the cells that have
// arrived.
func (l *CellLink) run() {
	now := l.s.Now()
	for l.sent.Len() > 0 && l.sent.Peek().end <= now {
		l.left = l.sent.Pop()
		b := &l.left
		l.stats.TxCells += uint64(b.n)
		l.stats.LostCells += uint64(b.lost)
		l.stats.LimitDrops += uint64(b.limited)
		if l.OnSent != nil {
			l.OnSent(&b.last)
		}
	}
	for l.deliveries.Len() > 0 {
		d := l.deliveries.Peek()
		if !d.train {
			if l.pipe.Peek().At > now {
				break
			}
			if d.n--; d.n == 0 {
				l.deliveries.Pop()
			}
			l.cur = l.pipe.Pop()
			l.deliver(&l.cur.Cell, now)
			continue
		}
		if l.pipe.At(d.n-1).At > now {
			break
		}
		n := l.deliveries.Pop().n
		l.train = l.train[:0]
		for range n {
			l.train = append(l.train, l.pipe.Pop())
		}
		l.stats.Delivered += uint64(n)
		for _, t := range l.taps {
			for i := range l.train {
				t.see(&l.train[i].Cell, l.train[i].At)
			}
		}
		l.trainDst.ReceiveTrain(l.train)
	}
	l.schedule()
}

// pipeFull reports whether the pipe holds its limit of cells in flight at
// t, the departure of the next cell: cells that have left and arrive after
// t. Departures only grow, so arrivals at or before t are forgotten. The
// count is kept apart from the pipe, which in trains also holds cells not
// yet sent and lets go of cells when a train is delivered, possibly after
// the departure of a train's next cell: both modes get the same answer
// whatever order one instant's events run in.
func (l *CellLink) pipeFull(t time.Duration) bool {
	for l.flight.Len() > 0 && *l.flight.Peek() <= t {
		l.flight.Pop()
	}
	limit := l.cfg.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	return l.flight.Len() >= limit
}

// lose draws whether the line loses the next cell.
func (l *CellLink) lose() bool {
	return l.cfg.CLR > 0 && l.rng.Float64() < l.cfg.CLR
}

// arrival returns when a cell whose last bit leaves at end arrives: after
// the propagation, the cell delay and the jitter, never before the cell
// ahead of it.
func (l *CellLink) arrival(end time.Duration) time.Duration {
	at := addSat(addSat(end, l.cfg.Propagation), l.cfg.Delay)
	if j := l.cfg.Jitter; j > 0 {
		// In uint64, 2j+1 neither overflows nor goes negative for any j.
		at = addSat(at, time.Duration(l.rng.Uint64N(2*uint64(j)+1)-uint64(j)))
	}
	at = max(at, l.lastAt, end)
	l.lastAt = at
	return at
}

// sendCell queues a cell to be stepped cell by cell.
func (l *CellLink) sendCell(c *cells.Cell, notBefore time.Duration) bool {
	n := l.Queued()
	if l.cfg.QueueCells > 0 && n >= l.cfg.QueueCells {
		l.stats.QueueDrops++
		return false
	}
	l.queue.Push(Arrival{*c, notBefore})
	l.stats.QueueHigh = max(l.stats.QueueHigh, n+1)
	if l.queue.Len() == 1 {
		l.start()
	}
	return true
}

// start puts the head cell in the first free slot at or after its time.
func (l *CellLink) start() {
	head := l.queue.Peek()
	slot := max(l.nextSlot, l.cfg.PHY.SlotAt(max(l.s.Now(), head.At)))
	l.nextSlot = slot + 1
	end := l.cfg.PHY.SlotEnd(slot)
	l.stats.BusyTime += end - l.cfg.PHY.SlotStart(slot)
	l.headEnd = end
	l.tx.Reset(end)
}

// departed runs at the last bit of the head cell.
func (l *CellLink) departed() {
	l.cur = l.queue.Pop()
	q := &l.cur
	l.stats.TxCells++
	if l.queue.Len() > 0 {
		l.start()
	}
	if l.OnSent != nil {
		l.OnSent(&q.Cell)
	}
	now := l.s.Now()
	limited := l.pipeFull(now)
	lost := limited || l.lose()
	if l.trace != nil {
		l.trace(&q.Cell, now, lost)
	}
	if limited {
		l.stats.LimitDrops++
		return
	}
	if lost {
		l.stats.LostCells++
		return
	}
	at := l.arrival(now)
	l.flight.Push(at)
	if at == now && l.pipe.Len() == 0 {
		l.deliver(&q.Cell, now)
		return
	}
	q.At = at
	l.pipe.Push(*q)
	if l.pipe.Len() == 1 {
		l.pipeTick.Reset(at)
	}
}

// arrive delivers every cell of the pipe that is due.
func (l *CellLink) arrive() {
	now := l.s.Now()
	for l.pipe.Len() > 0 && l.pipe.Peek().At <= now {
		l.cur = l.pipe.Pop()
		l.deliver(&l.cur.Cell, now)
	}
	if l.pipe.Len() > 0 {
		l.pipeTick.Reset(l.pipe.Peek().At)
	}
}

func (l *CellLink) deliver(c *cells.Cell, now time.Duration) {
	l.stats.Delivered++
	for _, t := range l.taps {
		t.see(c, now)
	}
	l.dst.ReceiveCell(c)
}

// addSat returns t+d, held at the largest time instead of wrapping.
func addSat(t, d time.Duration) time.Duration {
	if d > 0 && t > math.MaxInt64-d {
		return math.MaxInt64
	}
	return t + d
}
