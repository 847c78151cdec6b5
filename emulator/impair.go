package emulator

import (
	"math/rand/v2"
	"time"

	"github.com/atmlab/atmlab/emulator/units"
)

// Impair holds netem-style impairments for one direction of a link. The zero
// value is an ideal wire. Impairments act on a frame after its last bit has
// left the transmitter, in netem's order: loss, then rate, then delay.
type Impair struct {
	Delay  time.Duration // added to every frame: a pipe, many frames in flight
	Jitter time.Duration // uniform in [-Jitter, +Jitter]; order is kept, as on a wire
	Loss   float64       // probability in [0, 1] that a frame is dropped
	Limit  int           // frames held in the delay line at most; 0 = no limit
	Rate   units.BitRate // an extra bottleneck counting frame bytes only, as netem's rate; 0 = none
}

// IsZero reports whether the impairment changes nothing.
func (im Impair) IsZero() bool { return im == Impair{} }

// impairState is the per-direction state of an Impair.
type impairState struct {
	cfg      Impair
	rng      *rand.Rand
	rateFree time.Duration // when the rate stage is next free
	last     time.Duration // latest delivery time handed out, to keep FIFO order
	inFlight int
}

// admit decides the fate of a frame whose last bit left the transmitter at t:
// ok is false when it is lost (limit or loss), else at is its delivery time.
func (st *impairState) admit(t time.Duration, n int) (at time.Duration, ok bool, limited bool) {
	if st.cfg.Limit > 0 && st.inFlight >= st.cfg.Limit {
		return 0, false, true
	}
	if st.cfg.Loss > 0 && st.rng.Float64() < st.cfg.Loss {
		return 0, false, false
	}
	at = t
	if st.cfg.Rate > 0 {
		at = max(at, st.rateFree) + st.cfg.Rate.TxTime(int64(n)*8)
		st.rateFree = at
	}
	at += st.cfg.Delay
	if st.cfg.Jitter > 0 {
		at += time.Duration(st.rng.Int64N(int64(2*st.cfg.Jitter)+1)) - st.cfg.Jitter
	}
	at = max(at, st.last, t)
	st.last = at
	return at, true, false
}
