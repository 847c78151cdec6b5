// Package phy holds the ATM physical layers a lab can name and their cell
// clocks: values only, so that the lab-file package can check a link's PHY
// and rates without importing the ATM model (package atm). Facts:
// docs/reference.md §5.
package phy

import (
	"fmt"
	"math/bits"
	"slices"
	"strings"
	"time"

	"github.com/atmlab/atmlab/cells"
	"github.com/atmlab/atmlab/emulator/units"
)

// PHY is a physical layer's cell clock: a cell slot is CellOctets octet
// times at LineRate (atm.md §6).
type PHY struct {
	Name       string
	LineRate   units.BitRate // the bit rate available to cells
	CellOctets int           // octet times a cell holds the line: 53, or 54 where a command precedes it
}

// PHYs are the physical layers a lab can name.
var PHYs = map[string]PHY{
	// SONET/SDH STS-3c: 9 rows x 260 columns x 8 bits x 8000/s of C-4 payload.
	"oc3": {"oc3", 149_760_000, cells.Size},
	// STS-12c: 9 x 1040 x 8 x 8000.
	"oc12": {"oc12", 599_040_000, cells.Size},
	// DS-3 with PLCP: 12 cells per 125 µs frame.
	"ds3": {"ds3", 40_704_000, cells.Size},
	// E3 (G.832): 530 payload octets per 125 µs.
	"e3": {"e3", 33_920_000, cells.Size},
	// ATM Forum 25.6 Mbit/s: a one-octet start-of-cell command before every cell.
	"atm25": {"atm25", 25_600_000, cells.Size + 1},
}

// Names lists the PHYs, sorted.
func Names() []string {
	var n []string
	for k := range PHYs {
		n = append(n, k)
	}
	slices.Sort(n)
	return n
}

// aliases are other names users write for a PHY of the table: the
// concatenated SONET names the literature uses (OC-3c carries ATM) and
// their SDH twins, which map cells identically (ITU-T I.432.2).
var aliases = map[string]string{"oc3c": "oc3", "stm1": "oc3", "oc12c": "oc12", "stm4": "oc12"}

// Canonical returns the table's name for name, which may be an alias;
// any other name unchanged.
func Canonical(name string) string {
	if c, ok := aliases[name]; ok {
		return c
	}
	return name
}

// Lookup returns the PHY named name (or an alias of it) or an error
// listing the known ones.
func Lookup(name string) (PHY, error) {
	p, ok := PHYs[Canonical(name)]
	if !ok {
		return PHY{}, fmt.Errorf("unknown ATM PHY %q: use one of %s", name, strings.Join(Names(), ", "))
	}
	return p, nil
}

// slotBits is one cell slot in bit times.
func (p PHY) slotBits() int64 { return int64(p.CellOctets) * 8 }

// CellRate returns cells per second.
func (p PHY) CellRate() float64 { return float64(p.LineRate) / float64(p.slotBits()) }

// CellStreamRate is the rate of 53-octet cells in bit/s (R_cell in atm.md:
// 149.76 Mbit/s on OC-3c, 25.126 on ATM25).
func (p PHY) CellStreamRate() float64 { return p.CellRate() * cells.Size * 8 }

// SlotEnd returns when slot k ends: slots tile the line from time 0, so
// slot k occupies [SlotEnd(k-1), SlotEnd(k)), exact to the nanosecond
// however long the lab runs.
func (p PHY) SlotEnd(k int64) time.Duration { return p.LineRate.TxTime((k + 1) * p.slotBits()) }

// SlotAt returns the first slot that starts at or after t. Slot k starts at
// floor(k*bits*1e9/rate), which is >= t exactly when k >= t*rate/(bits*1e9).
func (p PHY) SlotAt(t time.Duration) int64 {
	if t <= 0 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(t), uint64(p.LineRate))
	q, r := bits.Div64(hi, lo, uint64(p.slotBits())*uint64(time.Second))
	if r != 0 {
		q++
	}
	return int64(q)
}

// SlotStart returns when slot k starts.
func (p PHY) SlotStart(k int64) time.Duration { return p.LineRate.TxTime(k * p.slotBits()) }
