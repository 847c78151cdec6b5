package labfile

import (
	"strings"
	"testing"

	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/defaults"
)

// defaultsLab leaves every defaulted value out: Ethernet links with and
// without an impairment, an ATM link through an atm-switch, a slow host, a
// software router with costs, a hub, a switch a variant makes a hub, and a
// variant that delays a link.
const defaultsLab = `name: d
topology:
  nodes:
    h1: {kind: host, ipv4: 10.0.0.1/24, cpu: {rate: 77M}}
    h2: {kind: host, ipv4: 10.0.0.2/24}
    sw1: {kind: switch}
    r1: {kind: router, cost: {ip: 10us}, interfaces: {eth0: {ipv4: 10.0.0.254/24}}}
    a1: {kind: host, ipv4: 10.0.1.1/24}
    a2: {kind: host, ipv4: 10.0.1.2/24}
    atm1: {kind: atm-switch}
    hub1: {kind: hub}
    c1: {kind: host, ipv4: 10.0.2.1/24}
    d1: {kind: host, ipv4: 10.0.3.1/24}
    d2: {kind: host, ipv4: 10.0.3.2/24}
  links:
    - {endpoints: ["h1:eth0", "sw1:p1"]}
    - {endpoints: ["h2:eth0", "sw1:p2"]}
    - {endpoints: ["r1:eth0", "sw1:p3"]}
    - {endpoints: ["a1:eth0", "atm1:p1"], atm: {phy: oc3}}
    - {endpoints: ["a2:eth0", "atm1:p2"], atm: {phy: oc3}}
    - {endpoints: ["c1:eth0", "hub1:p1"]}
    - {endpoints: ["d1:eth0", "d2:eth0"], impair: {loss: 1%}}
variants:
  - {name: hubbed, set: [{node: sw1, kind: hub}]}
  - {name: slow, set: [{node: h2, cpu: {per_packet: 5us}}, {node: r1, cost: {pop: 1us}}, {link: "h1:eth0", delay: 2ms}]}
`

// Resolve leaves no "0 = the default" behind: a minimal lab comes back
// with the values the models are built with, a variant's too, and
// spec.json says them. An Ethernet direction without impairments keeps
// limit 0: its channel has no pipe to bound (a hub's links never have
// one, and a variant that makes a switch a hub passes the hub's no-impair:
// check); an ATM link's cell link bounds its pipe always.
func TestResolveDefaults(t *testing.T) {
	lab, err := Parse("d.yaml", []byte(defaultsLab))
	if err != nil {
		t.Fatal(err)
	}
	limits := func(lab *topologies.Lab, delayed string) {
		t.Helper()
		for _, l := range lab.Links {
			want := 0
			switch {
			case l.ATM != nil:
				want = defaults.ATMLimit
			case l.A.Node == "d1" || l.A.Node == delayed:
				want = defaults.Limit
			}
			if l.AB.Impair.Limit != want || l.BA.Impair.Limit != want {
				t.Errorf("link %s-%s: limits %d and %d, want %d", l.A, l.B, l.AB.Impair.Limit, l.BA.Impair.Limit, want)
			}
		}
	}
	limits(lab, "")
	if c := lab.Node("h1").CPU; c == nil || c.Queue != defaults.CPUQueue {
		t.Errorf("h1's cpu %+v, want queue %d", c, defaults.CPUQueue)
	}
	if q := lab.Node("r1").Router.Cost.Queue; q != defaults.RouterQueue {
		t.Errorf("r1's cost queue %d, want %d", q, defaults.RouterQueue)
	}
	if s := lab.Node("atm1").ATMSwitch; s.Queue != defaults.ATMSwitchQueue || s.Discard != defaults.Discard {
		t.Errorf("atm1 %+v, want queue %d, discard %s", s, defaults.ATMSwitchQueue, defaults.Discard)
	}
	if n := lab.Node("sw1"); n.Buffer != defaults.SwitchBuffer {
		t.Errorf("sw1's buffer %v, want %v", n.Buffer, defaults.SwitchBuffer)
	}
	if n := lab.Node("hub1"); n.Repeater != defaults.Repeater {
		t.Errorf("hub1's repeater %q, want %q", n.Repeater, defaults.Repeater)
	}
	labs, err := lab.ResolveVariants([]string{"base", "hubbed", "slow"})
	if err != nil {
		t.Fatal(err)
	}
	limits(labs[1], "")
	limits(labs[2], "h1")
	if c := labs[2].Node("h2").CPU; c == nil || c.Queue != defaults.CPUQueue {
		t.Errorf("slow: h2's cpu %+v, want queue %d", c, defaults.CPUQueue)
	}
	if q := labs[2].Node("r1").Router.Cost.Queue; q != defaults.RouterQueue {
		t.Errorf("slow: r1's cost queue %d, want %d", q, defaults.RouterQueue)
	}
	spec, err := topologies.SpecJSON([]string{"base", "hubbed", "slow"}, labs)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"Limit": 1000,`, `"Limit": 192000,`, `"Queue": 64`, `"Queue": 1000`, `"Queue": 4096,`} {
		if !strings.Contains(string(spec), want) {
			t.Errorf("spec.json lacks %s", want)
		}
	}
}
