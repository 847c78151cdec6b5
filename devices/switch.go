package devices

import (
	"time"

	"github.com/atmlab/atmlab/emulator"
	"github.com/atmlab/atmlab/emulator/ether"
	"github.com/atmlab/atmlab/emulator/units"
	"github.com/atmlab/atmlab/topologies"
)

// switchUnit builds Ethernet switches: learning bridges with a byte-limited
// output buffer per port, which `atmlab set buffer=` changes.
type switchUnit struct{}

type ethSwitch struct {
	named
	sw     *ether.Switch
	buffer units.Size
}

func (switchUnit) build(b *builder, nodes []*topologies.Node) []Device {
	var out []Device
	for _, node := range nodes {
		sw := ether.NewSwitch(b.on(node.Name), node.Name)
		if node.Ageing > 0 {
			sw.Ageing = node.Ageing
		}
		sw.CPU = frameCPU(node.CPU, b.on(node.Name))
		out = append(out, &ethSwitch{named: named(node.Name), sw: sw, buffer: node.Buffer})
	}
	return out
}

// etherPort adds a port to the switch.
func (d *ethSwitch) etherPort(_ *builder, name string) emulator.Port { return d.sw.AddPort(name) }

// queue is the port's output buffer.
func (d *ethSwitch) queue() (frames, bytes int) { return 0, int(d.buffer) }

func (d *ethSwitch) setBuffer(cfg *emulator.ChannelConfig, size units.Size) {
	cfg.QueueBytes = int(size)
}

// Report counts the frames the switch filtered (to the port they came in
// on, or to a reserved address), in the stats' switch_filtered section too.
func (d *ethSwitch) Report(time.Duration) (Report, bool) {
	return Report{Kind: topologies.KindSwitch, Counters: map[string]uint64{"filtered": d.sw.Filtered},
		Section: "switch_filtered", Entry: d.sw.Filtered}, true
}
