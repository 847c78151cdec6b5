package topologies

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/atmlab/atmlab/emulator/units"
)

// Change is a run-time change to a link's directions (atmlab set): nil
// fields stay as they are; Reset first returns to the lab file's settings.
type Change struct {
	Rate          *units.BitRate `json:"rate,omitempty"`
	Delay, Jitter *time.Duration `json:",omitempty"`
	Loss          *float64       `json:"loss,omitempty"` // probability, 0 to 1
	Limit         *int           `json:"limit,omitempty"`
	Buffer        *units.Size    `json:"buffer,omitempty"` // a switch port's output buffer
	Reset         bool           `json:"reset,omitempty"`
}

// ParseChange reads key=value words: rate=10M delay=20ms jitter=1ms
// loss=1% limit=1000 buffer=64KiB (0 clears delay, jitter, loss and limit).
func ParseChange(words []string) (Change, error) {
	var c Change
	for _, w := range words {
		k, v, ok := strings.Cut(w, "=")
		if !ok {
			return c, fmt.Errorf("bad setting %q: write key=value, such as delay=20ms", w)
		}
		switch k {
		case "rate":
			r, err := units.ParseRate(v)
			if err != nil || r <= 0 {
				return c, fmt.Errorf("bad rate %q: a bit rate such as 10M or 1G", v)
			}
			c.Rate = &r
		case "delay", "jitter":
			d, err := time.ParseDuration(v)
			if err != nil || d < 0 {
				return c, fmt.Errorf("bad %s %q: a duration such as 20ms or 0", k, v)
			}
			if k == "delay" {
				c.Delay = &d
			} else {
				c.Jitter = &d
			}
		case "loss":
			p, err := strconv.ParseFloat(strings.TrimSuffix(v, "%"), 64)
			if err != nil || p < 0 || p > 100 {
				return c, fmt.Errorf("bad loss %q: a percentage from 0 to 100, such as 1%%", v)
			}
			p /= 100
			c.Loss = &p
		case "limit":
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return c, fmt.Errorf("bad limit %q: frames held in the delay line, such as 1000 (0 for netem's default of 1000)", v)
			}
			c.Limit = &n
		case "buffer":
			b, err := units.ParseSize(v)
			if err != nil || b <= 0 {
				return c, fmt.Errorf("bad buffer %q: a size such as 64KiB", v)
			}
			c.Buffer = &b
		default:
			return c, fmt.Errorf("unknown setting %q: use rate, delay, jitter, loss, limit or buffer", k)
		}
	}
	return c, nil
}

// String writes the change as atmlab set's words.
func (c Change) String() string {
	var w []string
	if c.Reset {
		w = append(w, "--reset")
	}
	if c.Rate != nil {
		w = append(w, "rate="+c.Rate.String())
	}
	if c.Delay != nil {
		w = append(w, "delay="+c.Delay.String())
	}
	if c.Jitter != nil {
		w = append(w, "jitter="+c.Jitter.String())
	}
	if c.Loss != nil {
		w = append(w, "loss="+strconv.FormatFloat(*c.Loss*100, 'f', -1, 64)+"%")
	}
	if c.Limit != nil {
		w = append(w, "limit="+strconv.Itoa(*c.Limit))
	}
	if c.Buffer != nil {
		w = append(w, "buffer="+c.Buffer.String())
	}
	return strings.Join(w, " ")
}
