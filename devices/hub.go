package devices

import (
	"fmt"
	"time"

	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/emulator/ether"
	"github.com/atmlab/atmlab/emulator/units"
	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/defaults"
)

// hubUnit builds hubs: a shared half-duplex medium (CSMA/CD) with a
// station for each link to it.
type hubUnit struct{}

type hub struct {
	named
	h *ether.Hub
}

// HubStats is a hub's entry in the stats' hubs section: how busy its
// medium was and how much of that went to collisions.
type HubStats struct {
	ether.HubStats
	Utilization       float64 `json:"utilization"`        // frame bits delivered / elapsed bit times
	CollisionFraction float64 `json:"collision_fraction"` // of the elapsed time
}

func (hubUnit) build(b *builder, nodes []*topologies.Node) []Device {
	var out []Device
	for _, node := range nodes {
		repeater := ether.RepeaterClassII
		if node.Repeater == topologies.Class1 {
			repeater = ether.RepeaterClassI
		}
		h := ether.NewHub(b.on(node.Name), node.Name, ether.HubConfig{Rate: hubRate(b.lab, node.Name), Repeater: repeater + ether.DTEPairBits, Seed: seedOf(b.lab.Seed, node.Name)})
		out = append(out, &hub{named: named(node.Name), h: h})
	}
	return out
}

// join makes the link's station: p's transmitter, with the output queue
// of the device at dev, and the hub's end of the link.
func (d *hub) join(b *builder, l *topologies.Link, dev topologies.Endpoint, p emulator.Port) *NetLink {
	cfg := b.n.channelConfig(dev, l.AB, l)
	name := l.A.String() // the hub's end ("hub1:p1")
	if l.A == dev {
		name = l.B.String()
	}
	st := d.h.AddStation(name, l.Propagation, cfg.QueueFrames, cfg.QueueBytes, p)
	p.SetTX(st)
	return &NetLink{Link: l, Medium: st}
}

// Report is the medium's utilisation and collisions since the lab started.
func (d *hub) Report(now time.Duration) (Report, bool) {
	hs := d.h.Stats()
	e := HubStats{HubStats: hs}
	if now > 0 { // at the lab's first instant both are 0, not NaN (which JSON cannot hold)
		e.Utilization = float64(hs.FrameBits) / (float64(d.h.Rate()) * now.Seconds())
		e.CollisionFraction = float64(hs.CollisionTime) / float64(now)
	}
	return Report{Kind: topologies.KindHub,
		Counters: map[string]uint64{"successes": hs.Successes, "collisions": hs.Collisions, "frame_bits": hs.FrameBits,
			"busy_ns": uint64(hs.Busy), "collision_ns": uint64(hs.CollisionTime)},
		Line: fmt.Sprintf("hub %s: utilisation %.1f%%, collisions %.2f%% of the time, %d frames, %d collision events",
			d.Name(), 100*e.Utilization, 100*e.CollisionFraction, hs.Successes, hs.Collisions),
		Section: "hubs", Entry: e}, true
}

// hubRate is the rate of the links to a hub (validation made them equal).
func hubRate(lab *topologies.Lab, hub string) units.BitRate {
	for _, l := range lab.Links {
		if l.A.Node == hub || l.B.Node == hub {
			return l.AB.Rate
		}
	}
	return defaults.Rate
}
