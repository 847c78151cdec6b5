package devices

import (
	"cmp"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"
)

// Labels returns each MPLS router's label bindings as lines a person
// reads (atmlab inspect): "push 16 for 10.0.3.0/24", "in 17: swap to 18
// via 10.0.1.2 (eth1)", "in 16: pop via 10.0.2.2 (eth2)", by router name.
// The bindings are fixed once the network is built.
func (n *Network) Labels() map[string][]string {
	out := map[string][]string{}
	for _, d := range n.Devices {
		ip, ok := d.(*ipRouter)
		if !ok || !ip.r.Config().MPLS {
			continue
		}
		push, ilm := ip.r.Bindings()
		var lines []string
		fecs := slices.SortedFunc(maps.Keys(push), func(a, b netip.Prefix) int {
			return cmp.Or(a.Addr().Compare(b.Addr()), cmp.Compare(a.Bits(), b.Bits()))
		})
		for _, fec := range fecs {
			lines = append(lines, fmt.Sprintf("push %d for %s", push[fec], fec))
		}
		for _, in := range slices.Sorted(maps.Keys(ilm)) {
			e := ilm[in]
			what := fmt.Sprintf("swap to %d", e.Out)
			if e.Pop {
				what = "pop"
			}
			iface := ""
			if e.Iface != nil {
				_, name, _ := strings.Cut(e.Iface.PortName(), ":")
				iface = " (" + name + ")"
			}
			lines = append(lines, fmt.Sprintf("in %d: %s via %s%s", in, what, e.Via, iface))
		}
		if len(lines) > 0 {
			out[d.Name()] = lines
		}
	}
	return out
}
