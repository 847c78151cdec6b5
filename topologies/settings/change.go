package settings

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
// loss=1% limit=1000 buffer=64KiB, each within its row of Settings, the
// lab file's ranges (0 clears delay, jitter and loss; limit=0 is the
// medium's default).
func ParseChange(words []string) (Change, error) {
	var c Change
	for _, w := range words {
		k, v, ok := strings.Cut(w, "=")
		if !ok {
			return c, fmt.Errorf("bad setting %q: write key=value, such as delay=20ms", w)
		}
		var err error
		switch k {
		case "rate":
			c.Rate = new(units.BitRate)
			*c.Rate, err = ParseRate(v)
		case "delay":
			c.Delay = new(time.Duration)
			*c.Delay, err = ParseDelay(v)
		case "jitter":
			c.Jitter = new(time.Duration)
			*c.Jitter, err = ParseJitter(v)
		case "loss":
			c.Loss = new(float64)
			*c.Loss, err = ParseLoss(v)
		case "limit":
			c.Limit = new(int)
			*c.Limit, err = ParseLimit(v)
		case "buffer":
			c.Buffer = new(units.Size)
			*c.Buffer, err = ParseBuffer(v)
		default:
			return c, fmt.Errorf("unknown setting %q: use %s", k, strings.Join(SettingKeys, ", "))
		}
		if err != nil {
			return Change{}, err
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
