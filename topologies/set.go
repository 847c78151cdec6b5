package topologies

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/emulator/atm"
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

// Applied is one direction a change reached: its sender and what it
// was and is now. On an ATM link (ATM set) Rate is the PHY's, and the
// impairments are the cells' delay, jitter and loss ratio.
type Applied struct {
	From, To      Endpoint
	Before, After emulator.ChannelConfig
	ATM           bool
}

// Set applies c to the link with endpoint e, in both directions or only in
// the one sent from `from` (an endpoint of the link). Call it on the
// scheduler's goroutine: it takes effect at the model's current time.
func (n *Network) Set(e, from string, c Change) ([]Applied, error) {
	nl := n.Link(e)
	if nl == nil {
		return nil, fmt.Errorf("no link has endpoint %q; name one end of a link, such as h1:eth0", e)
	}
	l := nl.Link
	if nl.Station != nil {
		return nil, fmt.Errorf("link %s-%s is on a hub, whose medium is shared: run-time changes are for point-to-point Ethernet and ATM links", l.A, l.B)
	}
	lo, hi, err := directions(l, from)
	if err != nil {
		return nil, err
	}
	if nl.ATM != nil {
		return n.setATM(nl, lo, hi, c)
	}
	type side struct {
		from, to Endpoint
		dir      Direction
		ch       *emulator.Channel
	}
	sides := []side{{l.A, l.B, l.AB, nl.AB}, {l.B, l.A, l.BA, nl.BA}}[lo:hi]
	if c.Buffer != nil {
		var sw []side
		for _, s := range sides {
			if n.Lab.Node(s.from.Node).Kind == KindSwitch {
				sw = append(sw, s)
			}
		}
		if len(sw) == 0 {
			return nil, fmt.Errorf("buffer= is a switch port's output buffer, and no switch sends on link %s-%s in that direction", l.A, l.B)
		}
		if c.Rate == nil && c.Delay == nil && c.Jitter == nil && c.Loss == nil && c.Limit == nil && !c.Reset {
			sides = sw
		}
	}
	var out []Applied
	for _, s := range sides {
		before := s.ch.Config()
		cfg := before
		if c.Reset {
			cfg = channelConfig(n.Lab, s.from, s.dir, l)
		}
		if c.Rate != nil {
			cfg.Rate = *c.Rate
		}
		cfg.Impair = c.impair(cfg.Impair)
		if c.Buffer != nil && n.Lab.Node(s.from.Node).Kind == KindSwitch {
			cfg.QueueBytes = int(*c.Buffer)
		}
		s.ch.SetConfig(cfg)
		out = append(out, Applied{From: s.from, To: s.to, Before: before, After: cfg})
	}
	return out, nil
}

// impair returns im with the change's delay, jitter, loss and limit, where
// it names them: an Ethernet channel's impairments, or an ATM link
// direction's (cellChannel) as the same four.
func (c Change) impair(im emulator.Impair) emulator.Impair {
	if c.Delay != nil {
		im.Delay = *c.Delay
	}
	if c.Jitter != nil {
		im.Jitter = *c.Jitter
	}
	if c.Loss != nil {
		im.Loss = *c.Loss
	}
	if c.Limit != nil {
		im.Limit = *c.Limit
	}
	return im
}

// directions returns which of the link's directions, AB (0) and BA (1),
// a change sent from `from` reaches: both when from is empty.
func directions(l *Link, from string) (lo, hi int, err error) {
	switch from {
	case "":
		return 0, 2, nil
	case l.A.String():
		return 0, 1, nil
	case l.B.String():
		return 1, 2, nil
	}
	return 0, 0, fmt.Errorf("--direction %s is not an end of link %s-%s; use %s or %s", from, l.A, l.B, l.A, l.B)
}

// setATM applies c to an ATM link's directions lo to hi: the cells' delay,
// jitter, loss ratio (loss=) and the cells the delay line holds at most
// (limit=), from the model's current time on (atm.CellLink.SetConfig). The
// rate is the PHY's.
func (n *Network) setATM(nl *NetLink, lo, hi int, c Change) ([]Applied, error) {
	l := nl.Link
	if c.Rate != nil || c.Buffer != nil {
		return nil, fmt.Errorf("link %s-%s is ATM, whose rate is its PHY's: set delay, jitter, loss (each cell's loss ratio) or limit (cells in the delay line), or --reset", l.A, l.B)
	}
	type side struct {
		from, to Endpoint
		dir      Direction
		cl       *atm.CellLink
	}
	var out []Applied
	for _, s := range []side{{l.A, l.B, l.AB, nl.ATM.AB}, {l.B, l.A, l.BA, nl.ATM.BA}}[lo:hi] {
		before := s.cl.Config()
		im := cellChannel(before).Impair
		if c.Reset {
			im = emulator.Impair{Delay: s.dir.Impair.Delay, Jitter: s.dir.Impair.Jitter, Loss: s.dir.Impair.Loss, Limit: s.dir.Impair.Limit}
		}
		im = c.impair(im)
		cfg := before
		cfg.Delay, cfg.Jitter, cfg.CLR, cfg.Limit = im.Delay, im.Jitter, im.Loss, im.Limit
		s.cl.SetConfig(cfg)
		out = append(out, Applied{From: s.from, To: s.to, Before: cellChannel(before), After: cellChannel(cfg), ATM: true})
	}
	return out, nil
}

// cellChannel describes an ATM link direction as a channel's settings.
func cellChannel(c atm.LinkConfig) emulator.ChannelConfig {
	return emulator.ChannelConfig{Rate: c.PHY.LineRate, Propagation: c.Propagation,
		Impair: emulator.Impair{Delay: c.Delay, Jitter: c.Jitter, Loss: c.CLR, Limit: c.Limit}}
}
