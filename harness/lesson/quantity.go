package lesson

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Dimension is what a figure measures; a figure converts only within its
// dimension.
type Dimension string

// The dimensions of the quantities a lesson asks for.
const (
	Rate   Dimension = "bit rate"
	Octets Dimension = "octets"
	Cells  Dimension = "cells"
	Time   Dimension = "time"
	PerSec Dimension = "per second"
	Ratio  Dimension = "ratio"
)

// unit is one unit a figure may be written in: its dimension and its size
// in the dimension's base unit (bit/s, octets, cells, s, 1/s, a fraction).
type unit struct {
	dim    Dimension
	factor float64
}

// units are the units an answer may carry. Bytes are octets; "MB/s" is
// 10^6 octets a second and "MiB/s" 2^20: the difference is a slip atmlab
// names, so both are kept apart.
var units = map[string]unit{
	"bit/s": {Rate, 1}, "b/s": {Rate, 1}, "bps": {Rate, 1},
	"kbit/s": {Rate, 1e3}, "kb/s": {Rate, 1e3}, "kbps": {Rate, 1e3},
	"mbit/s": {Rate, 1e6}, "mb/s": {Rate, 1e6}, "mbps": {Rate, 1e6},
	"gbit/s": {Rate, 1e9}, "gb/s": {Rate, 1e9}, "gbps": {Rate, 1e9},
	"byte/s": {Rate, 8}, "bytes/s": {Rate, 8}, "octets/s": {Rate, 8},
	"kbyte/s": {Rate, 8e3}, "mbyte/s": {Rate, 8e6}, "gbyte/s": {Rate, 8e9},
	"kib/s": {Rate, 8 << 10}, "mib/s": {Rate, 8 << 20}, "gib/s": {Rate, 8 << 30},
	"octets": {Octets, 1}, "octet": {Octets, 1}, "bytes": {Octets, 1}, "byte": {Octets, 1},
	"bits": {Octets, 0.125}, "bit": {Octets, 0.125},
	"kib": {Octets, 1 << 10}, "mib": {Octets, 1 << 20},
	"cells": {Cells, 1}, "cell": {Cells, 1},
	"s": {Time, 1}, "ms": {Time, 1e-3}, "us": {Time, 1e-6}, "µs": {Time, 1e-6}, "ns": {Time, 1e-9},
	"/s": {PerSec, 1}, "tps": {PerSec, 1}, "transactions/s": {PerSec, 1},
	"%": {Ratio, 0.01},
}

// caseUnits are the units whose case matters: B is a byte, b a bit.
var caseUnits = map[string]unit{
	"B": {Octets, 1}, "kB": {Octets, 1e3}, "KB": {Octets, 1e3}, "MB": {Octets, 1e6},
	"B/s": {Rate, 8}, "kB/s": {Rate, 8e3}, "KB/s": {Rate, 8e3}, "MB/s": {Rate, 8e6}, "GB/s": {Rate, 8e9},
	"MBps": {Rate, 8e6},
}

// lookupUnit finds a unit by name: bytes' units by case, the others in
// any case.
func lookupUnit(name string) (unit, bool) {
	if u, ok := caseUnits[name]; ok {
		return u, true
	}
	if strings.ContainsAny(name, "B") && !strings.Contains(strings.ToLower(name), "byte") && !strings.Contains(name, "iB") {
		return unit{}, false // "Mb/s" is bits; "MB/s" was found above; "mBps" is no unit
	}
	u, ok := units[strings.ToLower(name)]
	return u, ok
}

// Figure is a number with the unit it was written in.
type Figure struct {
	Number float64 // as written
	Unit   string  // as written; "" when none
}

// parseFigure reads "135.6 Mbit/s", "11 cells", "0.5%", "135.6": a number
// (a comma as the decimal point too) and an optional unit.
func parseFigure(s string) (Figure, error) {
	s = strings.TrimSpace(s)
	end := 0
	for end < len(s) && strings.IndexByte("0123456789.,+-eE", s[end]) >= 0 {
		if (s[end] == 'e' || s[end] == 'E') && (end == 0 || end+1 >= len(s) || strings.IndexByte("0123456789+-", s[end+1]) < 0) {
			break
		}
		end++
	}
	num := strings.ReplaceAll(s[:end], ",", ".")
	if strings.Count(num, ".") > 1 {
		return Figure{}, fmt.Errorf("%q: want one decimal point (no thousands separators): 135.6 Mbit/s", s)
	}
	n, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsInf(n, 0) || math.IsNaN(n) {
		return Figure{}, fmt.Errorf("%q: want a number with an optional unit, such as 135.6 Mbit/s or 11 cells", s)
	}
	name := strings.TrimSpace(s[end:])
	if name != "" {
		if _, ok := lookupUnit(name); !ok {
			return Figure{}, fmt.Errorf("%q: unknown unit %q; use one of bit/s kbit/s Mbit/s Gbit/s MB/s MiB/s, octets bytes bits, cells, s ms us, %%", s, name)
		}
	}
	return Figure{Number: n, Unit: name}, nil
}

// base is the figure in its dimension's base unit, with the lesson's unit
// when the figure has none.
func (f Figure) base(lessonUnit string) (float64, Dimension) {
	name := f.Unit
	if name == "" {
		name = lessonUnit
	}
	u, ok := lookupUnit(name)
	if !ok {
		return f.Number, ""
	}
	return f.Number * u.factor, u.dim
}

func (f Figure) String() string {
	n := strconv.FormatFloat(f.Number, 'g', -1, 64)
	if f.Unit == "" {
		return n
	}
	return n + " " + f.Unit
}

// format writes v (in base units) in the named unit, to 5 significant
// figures.
func format(v float64, name string) string {
	u, ok := lookupUnit(name)
	if !ok || u.factor == 0 {
		return strconv.FormatFloat(v, 'g', 5, 64)
	}
	x := v / u.factor
	s := strconv.FormatFloat(x, 'f', -1, 64)
	if len(s) > 7 {
		s = strconv.FormatFloat(x, 'g', 5, 64)
		if !strings.ContainsAny(s, "e") && math.Abs(x) >= 1e5 {
			s = strconv.FormatFloat(x, 'f', 0, 64)
		}
	}
	return s
}

// Tolerance is how far an answer may be from the figure it is checked
// against: relative (Percent) or absolute (Abs, in base units).
type Tolerance struct {
	Percent float64
	Abs     float64
	Text    string
}

// parseTolerance reads "1%" or "0.5 Mbit/s" (in dim). A % is always
// relative, for a share too ("2 %" of a 40 % share is 0.8 points).
func parseTolerance(s string, dim Dimension) (Tolerance, error) {
	s = strings.TrimSpace(s)
	if p, ok := strings.CutSuffix(s, "%"); ok {
		n, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || n < 0 || n > 100 {
			return Tolerance{}, fmt.Errorf("%q: want a relative tolerance from 0%% to 100%%, such as 1%%", s)
		}
		return Tolerance{Percent: n, Text: s}, nil
	}
	f, err := parseFigure(s)
	if err != nil {
		return Tolerance{}, err
	}
	if f.Unit == "" {
		return Tolerance{}, fmt.Errorf("%q: give a unit (an absolute tolerance, such as \"0.5 Mbit/s\") or a %% (relative)", s)
	}
	v, d := f.base("")
	if d != dim || v < 0 {
		return Tolerance{}, fmt.Errorf("%q: the answer is %s; give the tolerance in its units or as a %%", s, dim)
	}
	return Tolerance{Abs: v, Text: s}, nil
}

// within reports whether got is within the tolerance of want.
func (t Tolerance) within(got, want float64) bool {
	d := math.Abs(got - want)
	if t.Abs > 0 || t.Percent == 0 {
		return d <= t.Abs+1e-9*math.Abs(want)
	}
	return d <= t.Percent/100*math.Abs(want)+1e-12
}
