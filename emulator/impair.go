package emulator

import (
	"math"
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
	Limit  int           // frames held in the pipe at most; 0 = DefaultLimit
	Rate   units.BitRate // an extra bottleneck counting frame bytes only, as netem's rate; 0 = none
}

// DefaultLimit is the pipe's bound when Limit is 0: netem's default of 1000
// packets. A long delay at line rate then holds 1000 frames, not everything
// sent during the delay; the rest are counted as limit drops.
const DefaultLimit = 1000

// IsZero reports whether the impairment changes nothing.
func (im Impair) IsZero() bool { return im == Impair{} }

// impairState is the per-direction state of an Impair.
type impairState struct {
	cfg      Impair
	rng      *rand.Rand
	rateFree time.Duration // when the rate stage is next free
	last     time.Duration // latest delivery time handed out, to keep FIFO order
}

// admit decides the fate of a frame whose last bit left the transmitter at t:
// ok is false when it is lost (limit or loss), else at is its delivery time.
// inFlight is the number of frames in the delay line now.
func (st *impairState) admit(t time.Duration, n, inFlight int) (at time.Duration, ok bool, limited bool) {
	limit := st.cfg.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	if inFlight >= limit {
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
	at = addSat(at, st.cfg.Delay)
	if j := st.cfg.Jitter; j > 0 {
		// In uint64, 2j+1 neither overflows nor goes negative for any j.
		off := time.Duration(st.rng.Uint64N(2*uint64(j)+1) - uint64(j))
		at = addSat(at, off)
	}
	at = max(at, st.last, t)
	st.last = at
	return at, true, false
}

// addSat returns t+d, held at the largest time instead of wrapping.
func addSat(t, d time.Duration) time.Duration {
	if d > 0 && t > math.MaxInt64-d {
		return math.MaxInt64
	}
	return t + d
}
