package labfile

import (
	_ "embed"
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/kinds"
	"github.com/atmlab/atmlab/topologies/labyaml"
)

// Size limits of a lab file: validation is linear, but a lab is namespaces,
// TAPs and goroutines on one machine, and a file beyond these is a mistake
// or an attack.
const (
	MaxFileBytes = 4 << 20
	MaxNodes     = 4096
	MaxLinks     = 8192
)

// Value ranges the decoder enforces (docs/lab-file.md).
const (
	MaxCost    = kinds.MaxCost // a CPU's or router's cost per packet
	MaxCable   = 100_000_000.0 // metres: 100,000 km, 0.5 s of propagation
	nsPerMetre = 5             // about 5 ns per metre in copper and fibre
)

//go:embed sysctls.txt
var sysctlList string

// nsSysctls are the patterns of sysctls a network namespace can write.
var nsSysctls = func() []string {
	var out []string
	for _, l := range strings.Split(sysctlList, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}()

// congestionControls are Linux's TCP congestion control modules (net/ipv4
// tcp_*.c); `up` makes the ones a lab names selectable in its namespaces.
var congestionControls = []string{"bbr", "bic", "cdg", "cubic", "dctcp", "highspeed", "htcp", "hybla", "illinois", "lp", "nv", "reno", "scalable", "vegas", "veno", "westwood", "yeah"}

// checkSysctl refuses what `up` could not write in the host's namespace: a
// host-wide key (net.core.rmem_max), an unknown one, an interface the host
// lacks, or an unknown congestion control.
func (d *decoder) checkSysctl(n *topologies.Node, s topologies.Sysctl) {
	at, key := &yaml.Node{Line: s.Line}, "topology.nodes."+n.Name+".sysctls."+s.Key
	parts := strings.Split(s.Key, ".")
	known := slices.ContainsFunc(nsSysctls, func(p string) bool {
		pp := strings.Split(p, ".")
		if len(pp) != len(parts) {
			return false
		}
		for i := range pp {
			if pp[i] == "*" {
				if parts[i] != "all" && parts[i] != "default" && parts[i] != "lo" && n.Interface(parts[i]) == nil {
					return false
				}
			} else if pp[i] != parts[i] {
				return false
			}
		}
		return true
	})
	if !known {
		d.Errorf(at, key, "not a sysctl a host's own namespace can write (host-wide keys such as net.core.rmem_max cannot be set per host; per-interface keys name one of %s's interfaces, all or default)", n.Name)
		return
	}
	if strings.ContainsAny(s.Value, "\n\x00") || s.Value == "" {
		d.Errorf(at, key, "want one line of value, got %q", s.Value)
		return
	}
	if s.Key == "net.ipv4.tcp_congestion_control" && !slices.Contains(congestionControls, s.Value) {
		d.Errorf(at, key, "unknown congestion control %q: use one of %s", s.Value, strings.Join(congestionControls, ", "))
	}
}

// checkSize refuses a lab file beyond the size limits before it is parsed.
func checkSize(file string, data []byte) error {
	if len(data) > MaxFileBytes {
		return &labyaml.Error{File: file, Line: 1, Key: "file", Msg: fmt.Sprintf("%d bytes: a lab file holds at most %d (4 MiB); split the lab", len(data), MaxFileBytes)}
	}
	return nil
}
