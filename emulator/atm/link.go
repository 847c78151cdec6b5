package atm

import (
	"math/rand/v2"
	"time"

	"github.com/atmlab/atmlab/cells"
	"github.com/atmlab/atmlab/emulator/sched"
)

// CellReceiver takes the cells a link delivers, at the model time a cell's
// last bit arrives. The cell is valid during the call only.
type CellReceiver interface {
	ReceiveCell(c *cells.Cell)
}

// LinkConfig is one direction of an ATM link.
type LinkConfig struct {
	PHY         PHY
	Propagation time.Duration
	Delay       time.Duration // cell delay added to every cell
	Jitter      time.Duration // uniform in [-Jitter, +Jitter]; cells keep their order
	CLR         float64       // cell loss ratio: each cell is lost with this probability
	QueueCells  int           // tail-drop limit of the queue, in cells; 0 = none
	Seed        uint64
}

// LinkStats are a cell link's counters.
type LinkStats struct {
	TxCells    uint64 `json:"tx_cells"`    // cells whose last bit left the transmitter
	QueueDrops uint64 `json:"queue_drops"` // cells refused by a full queue
	LostCells  uint64 `json:"lost_cells"`  // cells lost on the line (the cell loss ratio)
	Delivered  uint64 `json:"delivered"`
	QueueHigh  int    `json:"queue_high_cells"`
	BusyTime   time.Duration
}

// CellLink is one direction of an ATM link: a FIFO of cells and a
// transmitter that sends one cell per slot of the PHY's cell clock, then a
// pipe of propagation and cell delay. Slots tile the line from model time 0,
// as on a SONET/SDH or PLCP frame, so a cell arriving at an idle link waits
// for the next slot boundary. One timer serves the transmitter and one the
// pipe: no allocation per cell. Call every method on the scheduler goroutine.
type CellLink struct {
	s   *sched.Scheduler
	cfg LinkConfig
	dst CellReceiver
	rng *rand.Rand

	queue    ring[queued]
	nextSlot int64 // the first slot not yet used
	tx       *sched.Timer

	pipe     ring[queued] // cells in flight, in delivery order
	pipeTick *sched.Timer
	lastAt   time.Duration
	cur      queued // the cell being handed on (a field: no allocation per cell)

	// OnSent, if set, sees each cell when its last bit leaves the
	// transmitter (an adapter counts the PDUs it has sent).
	OnSent func(c *cells.Cell)
	taps   []*Tap
	stats  LinkStats
}

// queued is a cell and, in the queue, the earliest time it may leave (a
// shaper's), in the pipe the time it arrives.
type queued struct {
	c  cells.Cell
	at time.Duration
}

// NewCellLink returns a link direction that delivers to dst.
func NewCellLink(s *sched.Scheduler, cfg LinkConfig, dst CellReceiver) *CellLink {
	l := &CellLink{s: s, cfg: cfg, dst: dst, rng: rand.New(rand.NewPCG(cfg.Seed, 0x6365_6c6c))}
	l.tx = s.NewTimer(l.departed)
	l.pipeTick = s.NewTimer(l.arrive)
	return l
}

// Stats returns the link's counters.
func (l *CellLink) Stats() LinkStats { return l.stats }

// PHY returns the link's physical layer.
func (l *CellLink) PHY() PHY { return l.cfg.PHY }

// Queued returns the cells waiting or in service.
func (l *CellLink) Queued() int { return l.queue.len() }

// Full reports whether the queue would refuse a cell now.
func (l *CellLink) Full() bool { return l.cfg.QueueCells > 0 && l.queue.len() >= l.cfg.QueueCells }

// Send queues a copy of c to leave no earlier than notBefore. A cell that
// does not fit is dropped, counted, and Send returns false.
func (l *CellLink) Send(c *cells.Cell, notBefore time.Duration) bool {
	if l.Full() {
		l.stats.QueueDrops++
		return false
	}
	l.queue.push(queued{*c, notBefore})
	l.stats.QueueHigh = max(l.stats.QueueHigh, l.queue.len())
	if l.queue.len() == 1 {
		l.start()
	}
	return true
}

// start puts the head cell in the first free slot at or after its time.
func (l *CellLink) start() {
	head := l.queue.peek()
	slot := max(l.nextSlot, l.cfg.PHY.SlotAt(max(l.s.Now(), head.at)))
	l.nextSlot = slot + 1
	end := l.cfg.PHY.SlotEnd(slot)
	l.stats.BusyTime += end - l.cfg.PHY.slotStart(slot)
	l.tx.Reset(end)
}

// departed runs at the last bit of the head cell.
func (l *CellLink) departed() {
	l.cur = l.queue.pop()
	q := &l.cur
	l.stats.TxCells++
	if l.OnSent != nil {
		l.OnSent(&q.c)
	}
	if l.queue.len() > 0 {
		l.start()
	}
	if l.cfg.CLR > 0 && l.rng.Float64() < l.cfg.CLR {
		l.stats.LostCells++
		return
	}
	now := l.s.Now()
	at := now + l.cfg.Propagation + l.cfg.Delay
	if l.cfg.Jitter > 0 {
		at += time.Duration(l.rng.Int64N(int64(2*l.cfg.Jitter)+1)) - l.cfg.Jitter
	}
	at = max(at, l.lastAt, now)
	l.lastAt = at
	if at == now && l.pipe.len() == 0 {
		l.deliver(&q.c)
		return
	}
	q.at = at
	l.pipe.push(*q)
	if l.pipe.len() == 1 {
		l.pipeTick.Reset(at)
	}
}

// arrive delivers every cell of the pipe that is due.
func (l *CellLink) arrive() {
	now := l.s.Now()
	for l.pipe.len() > 0 && l.pipe.peek().at <= now {
		l.cur = l.pipe.pop()
		l.deliver(&l.cur.c)
	}
	if l.pipe.len() > 0 {
		l.pipeTick.Reset(l.pipe.peek().at)
	}
}

func (l *CellLink) deliver(c *cells.Cell) {
	l.stats.Delivered++
	for _, t := range l.taps {
		t.see(c, l.s.Now())
	}
	l.dst.ReceiveCell(c)
}

// ring is a growable FIFO that reuses its storage.
type ring[T any] struct {
	buf     []T
	head, n int
}

func (r *ring[T]) len() int { return r.n }

func (r *ring[T]) push(v T) {
	if r.n == len(r.buf) {
		nb := make([]T, max(16, 2*len(r.buf)))
		for i := range r.n {
			nb[i] = r.buf[(r.head+i)%len(r.buf)]
		}
		r.buf, r.head = nb, 0
	}
	r.buf[(r.head+r.n)%len(r.buf)] = v
	r.n++
}

func (r *ring[T]) peek() *T { return &r.buf[r.head] }

func (r *ring[T]) pop() T {
	v := r.buf[r.head]
	r.head = (r.head + 1) % len(r.buf)
	r.n--
	return v
}
