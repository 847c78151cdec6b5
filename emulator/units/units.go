// Package units holds the typed quantities of lab files and models: bit rates
// and byte sizes, with parsers for the forms users write ("100M", "155.52M",
// "oc3", "128KiB") and the exact time a number of bits takes on a link.
package units

import (
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"time"
)

// BitRate is a rate in bits per second.
type BitRate int64

// Common rates.
const (
	Kbps BitRate = 1000
	Mbps BitRate = 1000 * Kbps
	Gbps BitRate = 1000 * Mbps
)

// namedPHYs maps PHY names to their line rates (SONET/SDH and PDH figures).
var namedPHYs = map[string]BitRate{
	"oc3":   155_520_000,
	"oc12":  622_080_000,
	"ds3":   44_736_000,
	"atm25": 25_600_000,
}

// The rates a lab may use: tc's token bucket, in front of every host, takes
// whole octets per second (1 bit/s is 0 to it) and a burst in 32 bits (2 ms
// of line rate at the fastest).
const (
	MinRate = Kbps
	MaxRate = 1000 * Gbps
)

// ParseRate parses a rate: a decimal number with an optional SI suffix
// (k, M, G, with optional "bps", "bit" or "b/s"), or a named PHY (oc3, oc12,
// ds3, atm25). "100M" is 100 Mbit/s; "155.52M" is OC-3's line rate. A rate
// is from MinRate to MaxRate.
func ParseRate(s string) (BitRate, error) {
	in := strings.TrimSpace(s)
	if r, ok := namedPHYs[strings.ToLower(in)]; ok {
		return r, nil
	}
	num := strings.ToLower(in)
	for _, suf := range []string{"bps", "bit/s", "b/s", "bit"} {
		num = strings.TrimSuffix(num, suf)
	}
	mult := 1.0
	switch {
	case strings.HasSuffix(num, "k"):
		mult, num = 1e3, num[:len(num)-1]
	case strings.HasSuffix(num, "m"):
		mult, num = 1e6, num[:len(num)-1]
	case strings.HasSuffix(num, "g"):
		mult, num = 1e9, num[:len(num)-1]
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || num == "" {
		return 0, fmt.Errorf("bad rate %q: write a number with k, M or G (100M, 155.52M) or a PHY name (oc3, oc12, ds3, atm25)", s)
	}
	v *= mult
	if !(v+0.5 >= float64(MinRate) && v+0.5 < float64(MaxRate)+1) { // NaN fails too
		return 0, fmt.Errorf("bad rate %q: from 1k to 1000G (1 kbit/s to 1 Tbit/s)", s)
	}
	return BitRate(v + 0.5), nil
}

// String formats the rate with the largest SI unit that keeps it readable.
func (r BitRate) String() string {
	switch {
	case r >= Gbps:
		return trim(float64(r)/1e9) + "G"
	case r >= Mbps:
		return trim(float64(r)/1e6) + "M"
	case r >= Kbps:
		return trim(float64(r)/1e3) + "k"
	}
	return strconv.FormatInt(int64(r), 10)
}

func trim(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// TxTime returns how long n bits take at rate r, rounded down to the
// nanosecond. The 128-bit intermediate keeps it exact for any realistic n, so
// callers that sum bits and convert once never accumulate rounding error.
func (r BitRate) TxTime(nbits int64) time.Duration {
	hi, lo := bits.Mul64(uint64(nbits), uint64(time.Second))
	q, _ := bits.Div64(hi, lo, uint64(r))
	return time.Duration(q)
}

// Size is a number of bytes.
type Size int64

// ParseSize parses a byte count: a whole number with an optional unit
// B, KiB, MiB, GiB (powers of two) or KB, MB, GB (powers of ten).
func ParseSize(s string) (Size, error) {
	in := strings.TrimSpace(s)
	units := []struct {
		suf  string
		mult int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1000}, {"MB", 1e6}, {"GB", 1e9}, {"B", 1}}
	mult := int64(1)
	num := in
	for _, u := range units {
		if strings.HasSuffix(in, u.suf) {
			mult, num = u.mult, strings.TrimSpace(strings.TrimSuffix(in, u.suf))
			break
		}
	}
	v, err := strconv.ParseInt(num, 10, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("bad size %q: write a whole number with B, KiB or MiB (128KiB)", s)
	}
	if v > math.MaxInt64/mult {
		return 0, fmt.Errorf("bad size %q: too large", s)
	}
	return Size(v * mult), nil
}

// String formats the size in the largest binary unit that divides it.
func (s Size) String() string {
	switch {
	case s != 0 && s%(1<<20) == 0:
		return strconv.FormatInt(int64(s>>20), 10) + "MiB"
	case s != 0 && s%(1<<10) == 0:
		return strconv.FormatInt(int64(s>>10), 10) + "KiB"
	}
	return strconv.FormatInt(int64(s), 10) + "B"
}
