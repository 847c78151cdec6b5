// Package settings is the table of values a link direction or a switch
// port takes, with their ranges and parsers, and atmlab set's change of
// them: the lab file's decoder and the running lab check against the same
// rows.
package settings

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/atmlab/atmlab/emulator/units"
)

// Setting is the range of one value a link direction or a switch port
// takes, in the lab file and at run time alike: the lab file's decoder,
// atmlab set's words, the live view's form and the control socket all check
// against the same row of Settings, so a running lab never holds what its
// lab file could not say.
type Setting struct {
	Min, Max float64 // in Unit
	Unit     string  // ns, bit/s, bytes, frames or probability (loss, written as a percentage)
	What     string  // what the value is
	Form     string  // how it is written
	Example  string
	Zero     string // what 0 means where 0 is below Min ("" when it is not allowed)
}

// Settings are the keys atmlab set changes, with their ranges (docs/design.md,
// "Run-time settings").
var Settings = map[string]Setting{
	"rate": {Min: float64(units.MinRate), Max: float64(units.MaxRate), Unit: "bit/s",
		What: "the bit rate a link direction sends at", Form: "a bit rate (k, M, G or a PHY name)", Example: "10M"},
	"delay": {Min: 0, Max: float64(MaxDuration), Unit: "ns",
		What: "the fixed delay of a direction's delay line", Form: "a duration in Go syntax", Example: "20ms"},
	"jitter": {Min: 0, Max: float64(MaxDuration), Unit: "ns",
		What: "how far a frame's delay varies around delay", Form: "a duration in Go syntax", Example: "1ms"},
	"loss": {Min: 0, Max: 1, Unit: "probability",
		What: "the share of frames (an ATM link's: cells) lost at random", Form: "a percentage", Example: "0.1%"},
	"limit": {Min: 1, Max: MaxLimit, Unit: "frames",
		What: "frames (an ATM link's: cells) the delay line holds at most", Form: "a whole number", Example: "1000",
		Zero: "the medium's default, 1000 frames or 192000 cells"},
	"buffer": {Min: 1518, Max: MaxBuffer, Unit: "bytes",
		What: "a switch port's output buffer", Form: "a size with B, KiB, MiB or GiB", Example: "128KiB"},
}

// SettingKeys are Settings' keys in the order messages list them.
var SettingKeys = []string{"rate", "delay", "jitter", "loss", "limit", "buffer"}

// The ends of the ranges the lab file shares with atmlab set
// (docs/lab-file.md).
const (
	MaxDuration = 24 * time.Hour // delay, jitter, ageing, an experiment's duration
	MaxLimit    = 1 << 20        // frames in an impairment pipe
	MaxBuffer   = 1 << 30        // a switch's buffer per port, bytes
)

// In reports whether v, in the setting's unit, is in its range; NaN is
// in none.
func (s Setting) In(v float64) bool {
	return v >= s.Min && v <= s.Max || v == 0 && s.Zero != ""
}

// Range writes the range as lab files and atmlab set write values:
// "0 to 24h", "1k to 1000G", "0% to 100%".
func (s Setting) Range() string {
	r := s.Format(s.Min) + " to " + s.Format(s.Max)
	if s.Zero != "" {
		r += " (0: " + s.Zero + ")"
	}
	return r
}

// Want says what a value must be: its form, range and an example.
func (s Setting) Want() string {
	return fmt.Sprintf("%s from %s, such as %s", s.Form, s.Range(), s.Example)
}

// Format writes v, in the setting's unit, as lab files write it.
func (s Setting) Format(v float64) string {
	switch s.Unit {
	case "ns":
		d := time.Duration(v)
		switch {
		case d == 0:
			return "0"
		case d%time.Hour == 0:
			return strconv.FormatInt(int64(d/time.Hour), 10) + "h"
		}
		return d.String()
	case "bit/s":
		return units.BitRate(v).String()
	case "bytes":
		if b := int64(v); b != 0 && b%(1<<30) == 0 {
			return strconv.FormatInt(b>>30, 10) + "GiB"
		}
		return units.Size(v).String()
	case "probability":
		return strconv.FormatFloat(v*100, 'f', -1, 64) + "%"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// bad is the error for a value of key, as written, that does not read or
// is out of range.
func (s Setting) bad(key, v string) error {
	return fmt.Errorf("bad %s %q: %s", key, v, s.Want())
}

// ParseRate reads a rate (units.ParseRate's range is the row's).
func ParseRate(v string) (units.BitRate, error) {
	r, err := units.ParseRate(v)
	if err != nil || !Settings["rate"].In(float64(r)) {
		return 0, Settings["rate"].bad("rate", v)
	}
	return r, nil
}

// ParseDelay reads delay.
func ParseDelay(v string) (time.Duration, error) { return parseDuration("delay", v) }

// ParseJitter reads jitter.
func ParseJitter(v string) (time.Duration, error) { return parseDuration("jitter", v) }

func parseDuration(key, v string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(v))
	if err != nil || !Settings[key].In(float64(d)) {
		return 0, Settings[key].bad(key, v)
	}
	return d, nil
}

// ParseLoss reads a percentage ("0.1%" or 0.1) into a probability.
func ParseLoss(v string) (float64, error) {
	p, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), "%"), 64)
	if err != nil || !Settings["loss"].In(p/100) {
		return 0, Settings["loss"].bad("loss", v)
	}
	return p / 100, nil
}

// ParseLimit reads the frames (cells) a delay line holds; 0 is the default.
func ParseLimit(v string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || !Settings["limit"].In(float64(n)) {
		return 0, Settings["limit"].bad("limit", v)
	}
	return n, nil
}

// ParseBuffer reads a switch port's output buffer.
func ParseBuffer(v string) (units.Size, error) {
	b, err := units.ParseSize(v)
	if err != nil || !Settings["buffer"].In(float64(b)) {
		return 0, Settings["buffer"].bad("buffer", v)
	}
	return b, nil
}

// Check refuses a change with a value outside its row of Settings, naming
// every such key and its range. Changes that arrive other than as words
// (the control socket's JSON) are checked here before they are applied.
func (c Change) Check() error {
	var bad []string
	check := func(key string, v float64) {
		if s := Settings[key]; !s.In(v) {
			bad = append(bad, fmt.Sprintf("%s %s is out of range: %s", key, s.Format(v), s.Want()))
		}
	}
	if c.Rate != nil {
		check("rate", float64(*c.Rate))
	}
	if c.Delay != nil {
		check("delay", float64(*c.Delay))
	}
	if c.Jitter != nil {
		check("jitter", float64(*c.Jitter))
	}
	if c.Loss != nil {
		check("loss", *c.Loss)
	}
	if c.Limit != nil {
		check("limit", float64(*c.Limit))
	}
	if c.Buffer != nil {
		check("buffer", float64(*c.Buffer))
	}
	if len(bad) > 0 {
		return fmt.Errorf("bad change: %s", strings.Join(bad, "; "))
	}
	return nil
}
