// Package clock names the clocks a lab's points are measured by: real
// time (a lab in the kernel's namespaces) or virtual time (netstack hosts
// on the emulator's scheduler, in model time). A Clock is one of them; a
// Choice is lab run's --clock (one, or both side by side). Their text is
// the lab run flags', campaign.json's and results.jsonl's, unchanged.
package clock

import (
	"fmt"
	"slices"
	"strings"
)

// Clock is the clock one point is measured by. Its zero value is Real, so
// that a record without a clock (results.jsonl leaves real time out) reads
// as real time.
type Clock uint8

const (
	Real    Clock = iota // a lab in namespaces, paced by the wall clock
	Virtual              // netstack hosts in model time
)

// All are the clocks in the order a run measures them.
var All = []Clock{Real, Virtual}

var names = [...]string{Real: "real", Virtual: "virtual"}

// String is the clock's name: "real" or "virtual".
func (c Clock) String() string {
	if int(c) < len(names) {
		return names[c]
	}
	return fmt.Sprintf("clock(%d)", uint8(c))
}

// Parse reads a clock's name; "" is real time, as the flags' default.
func Parse(s string) (Clock, error) {
	switch s {
	case "", "real":
		return Real, nil
	case "virtual":
		return Virtual, nil
	}
	return Real, fmt.Errorf("unknown clock %q: use real or virtual", s)
}

// MarshalText writes the clock's name.
func (c Clock) MarshalText() ([]byte, error) {
	if int(c) >= len(names) {
		return nil, fmt.Errorf("unknown clock %d", uint8(c))
	}
	return []byte(c.String()), nil
}

// UnmarshalText reads a clock's name.
func (c *Clock) UnmarshalText(b []byte) error {
	v, err := Parse(string(b))
	if err == nil {
		*c = v
	}
	return err
}

// Key is the clock as a point's key holds it: "" for real time, so that
// keys of records written before clocks were typed still match.
func (c Clock) Key() string {
	if c == Real {
		return ""
	}
	return c.String()
}

// Choice is the clocks a run measures every point by, in order: lab run's
// --clock real, virtual or both. Its text is that flag's.
type Choice []Clock

// Both measures each point in real time, then in virtual time.
var Both = Choice{Real, Virtual}

// ParseChoice reads --clock: real (or ""), virtual or both.
func ParseChoice(s string) (Choice, error) {
	if s == "both" {
		return Both, nil
	}
	c, err := Parse(s)
	if err != nil {
		return nil, fmt.Errorf("unknown clock %q: use --clock real, virtual or both", s)
	}
	return Choice{c}, nil
}

// String is the choice as --clock takes it.
func (ch Choice) String() string {
	if slices.Equal(ch, Both) {
		return "both"
	}
	s := make([]string, len(ch))
	for i, c := range ch {
		s[i] = c.String()
	}
	return strings.Join(s, ",")
}

// Has reports whether the choice measures by c.
func (ch Choice) Has(c Clock) bool { return slices.Contains(ch, c) }

// Only reports whether the choice measures by c alone.
func (ch Choice) Only(c Clock) bool {
	return len(ch) > 0 && !slices.ContainsFunc(ch, func(o Clock) bool { return o != c })
}

// MarshalText writes the choice as --clock takes it.
func (ch Choice) MarshalText() ([]byte, error) { return []byte(ch.String()), nil }

// UnmarshalText reads a choice as --clock takes it.
func (ch *Choice) UnmarshalText(b []byte) error {
	v, err := ParseChoice(string(b))
	if err == nil {
		*ch = v
	}
	return err
}
