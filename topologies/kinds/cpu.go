package kinds

import (
	"math"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/atmlab/atmlab/emulator/units"
	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/defaults"
	"github.com/atmlab/atmlab/topologies/labyaml"
	"github.com/atmlab/atmlab/topologies/settings"
)

// maxPerByte is the most a CPU may spend on an octet: per_byte 8ms is a
// copy rate of 1 kbit/s.
const maxPerByte = 8 * time.Millisecond

// cpuField is the cpu: key of the kinds a CPU limits (a host, a switch).
func cpuField(d *labyaml.Decoder, n *topologies.Node) labyaml.Field {
	return labyaml.Field{Name: "cpu", Required: false, Decode: func(key string, v *yaml.Node) { n.CPU = DecodeFrameCPU(d, key, v) }}
}

// DecodeFrameCPU decodes a host's or a software switch's processing
// limit, a node's or a variant's: cpu: {per_packet, per_byte | rate, queue}.
func DecodeFrameCPU(d *labyaml.Decoder, key string, v *yaml.Node) *topologies.FrameCPU {
	c := &topologies.FrameCPU{}
	d.Mapping(v, key, []labyaml.Field{
		{Name: "per_packet", Required: false, Decode: func(key string, v *yaml.Node) { d.DurationIn(key, v, MaxCost, &c.PerPacket) }},
		{Name: "per_byte", Required: false, Decode: func(key string, v *yaml.Node) { // as the copy rate it is: 8 bits an octet
			var perByte time.Duration
			d.DurationIn(key, v, maxPerByte, &perByte)
			if perByte > 0 {
				c.Copy = units.BitRate(math.Round(8e9 / float64(perByte)))
			}
		}},
		{Name: "rate", Required: false, Decode: func(key string, v *yaml.Node) { labyaml.Parsed(d, key, v, settings.ParseRate, &c.Copy) }},
		{Name: "queue", Required: false, Decode: func(key string, v *yaml.Node) { d.IntIn(key, v, 1, 1<<20, &c.Queue) }},
	})
	if c.Queue == 0 {
		c.Queue = defaults.CPUQueue
	}
	return c
}
