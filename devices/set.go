package devices

import (
	"fmt"

	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/emulator/atm"
	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/settings"
)

// Applied is one direction a change reached: its sender and what it
// was and is now. On an ATM link (ATM set) Rate is the PHY's, and the
// impairments are the cells' delay, jitter and loss ratio.
type Applied struct {
	From, To      topologies.Endpoint
	Before, After emulator.ChannelConfig
	ATM           bool
}

// Set applies c to the link with endpoint e, in both directions or only in
// the one sent from `from` (an endpoint of the link). Call it on the
// scheduler's goroutine: it takes effect at the model's current time. A
// change with a value outside the lab file's ranges (settings.Settings)
// is refused whole, whichever way it came.
func (n *Network) Set(e, from string, c settings.Change) ([]Applied, error) {
	if err := c.Check(); err != nil {
		return nil, err
	}
	nl := n.Link(e)
	if nl == nil {
		return nil, fmt.Errorf("no link has endpoint %q; name one end of a link, such as h1:eth0", e)
	}
	l := nl.Link
	if nl.Medium != nil {
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
		from, to topologies.Endpoint
		dir      topologies.Direction
		ch       *emulator.Channel
	}
	sides := []side{{l.A, l.B, l.AB, nl.AB}, {l.B, l.A, l.BA, nl.BA}}[lo:hi]
	if c.Buffer != nil {
		var sw []side
		for _, s := range sides {
			if _, ok := n.Device(s.from.Node).(bufferedDevice); ok {
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
			cfg = n.channelConfig(s.from, s.dir, l)
		}
		if c.Rate != nil {
			cfg.Rate = *c.Rate
		}
		cfg.Impair = impair(c, cfg.Impair)
		if b, ok := n.Device(s.from.Node).(bufferedDevice); ok && c.Buffer != nil {
			b.setBuffer(&cfg, *c.Buffer)
		}
		s.ch.SetConfig(cfg)
		out = append(out, Applied{From: s.from, To: s.to, Before: before, After: cfg})
	}
	return out, nil
}

// impair returns im with the change's delay, jitter, loss and limit, where
// it names them: an Ethernet channel's impairments, or an ATM link
// direction's (cellChannel) as the same four.
func impair(c settings.Change, im emulator.Impair) emulator.Impair {
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
func directions(l *topologies.Link, from string) (lo, hi int, err error) {
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
func (n *Network) setATM(nl *NetLink, lo, hi int, c settings.Change) ([]Applied, error) {
	l := nl.Link
	if c.Rate != nil || c.Buffer != nil {
		return nil, fmt.Errorf("link %s-%s is ATM, whose rate is its PHY's: set delay, jitter, loss (each cell's loss ratio) or limit (cells in the delay line), or --reset", l.A, l.B)
	}
	type side struct {
		from, to topologies.Endpoint
		dir      topologies.Direction
		cl       *atm.CellLink
	}
	var out []Applied
	for _, s := range []side{{l.A, l.B, l.AB, nl.ATM.AB}, {l.B, l.A, l.BA, nl.ATM.BA}}[lo:hi] {
		before := s.cl.Config()
		im := cellChannel(before).Impair
		if c.Reset {
			im = emulator.Impair{Delay: s.dir.Impair.Delay, Jitter: s.dir.Impair.Jitter, Loss: s.dir.Impair.Loss, Limit: s.dir.Impair.Limit}
		}
		im = impair(c, im)
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
