package labfile

import (
	"os"
	"strings"
	"testing"

	"github.com/atmlab/atmlab/topologies/defaults"
)

// atmCore is testdata/atm-core.yaml with keys on every router.
func atmCore(t *testing.T, keys string) string {
	t.Helper()
	b, err := os.ReadFile("../testdata/atm-core.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return strings.NewReplacer("NAME", "core", "KEYS", keys).Replace(string(b))
}

// A router's interface on an ATM link is accepted, MPLS or not: it gets
// Classical IP's MTU, a PVC through the atm-switch to every other router
// interface there, each with the far end's address for ATMARP, and the
// host behind it a default route through it. No PVC joins a router to
// itself.
func TestRouterOnATMLinkAccepted(t *testing.T) {
	for _, keys := range []string{"", "mpls: true,", "mpls: true, null: explicit,"} {
		lab, err := Parse("core.yaml", []byte(atmCore(t, keys)))
		if err != nil {
			t.Fatalf("%q: %v", keys, err)
		}
		i := lab.Node("r2").Interface("atm0")
		if i.MTU != defaults.ATMMTU {
			t.Errorf("r2:atm0's MTU %d, want %d (RFC 2225)", i.MTU, defaults.ATMMTU)
		}
		var peers []string
		for _, vc := range i.VCs {
			peers = append(peers, vc.Peer.String())
		}
		if got := strings.Join(peers, " "); got != "10.0.1.1 10.0.2.3 10.0.3.3 10.0.3.4" {
			t.Errorf("%q: r2:atm0's PVCs lead to %s, want one to every other router's interface on the switch", keys, got)
		}
		if r := lab.Node("h1").Routes; len(r) != 1 || r[0].Via.String() != "10.0.0.254" {
			t.Errorf("h1's routes %+v, want a default through r1", r)
		}
	}
	// Two routers on one point-to-point ATM link (no switch) share its one PVC.
	lab, err := Parse("p2p.yaml", []byte(`name: p2p
topology:
  nodes:
    r1: {kind: router, interfaces: {a0: {ipv4: 10.9.0.1/30}}}
    r2: {kind: router, interfaces: {a0: {ipv4: 10.9.0.2/30}}}
  links:
    - {endpoints: ["r1:a0", "r2:a0"], atm: {phy: e3, aal: aal34, encap: vcmux, vci: 77}}
`))
	if err != nil {
		t.Fatal(err)
	}
	if vcs := lab.Node("r1").Interface("a0").VCs; len(vcs) != 1 || vcs[0].VCI != 77 {
		t.Errorf("r1:a0's PVCs %+v, want the link's one, VCI 77", vcs)
	}
}

// Bad router ATM configurations are refused at their line: labelled
// packets on a VC-mux link (it carries IP only), a router ATM interface
// without an address, two router interfaces whose links through the
// switch differ in AAL, and a variant that turns MPLS on over VC-mux.
func TestRouterOnATMLinkRefusals(t *testing.T) {
	core := atmCore(t, "mpls: true,")
	for _, tc := range []struct {
		name, lab, want string
	}{
		{"vcmux", strings.ReplaceAll(core, "encap: llc", "encap: vcmux"),
			"core.yaml:21: topology.links: r2:atm1 is an MPLS router's interface on a VC-mux ATM link, which carries IP only; labelled packets need LLC/SNAP: atm: {encap: llc}"},
		{"no address", strings.Replace(core, `atm0: {ipv4: 10.0.2.3/24}`, `atm0: {}`, 1),
			"core.yaml:14: topology.nodes.r3.interfaces: router interface atm0 needs an address"},
		{"aal differs", strings.Replace(core, `["r3:atm1", "atm1:p5"], atm: {phy: oc3, aal: aal5, encap: llc}`, `["r3:atm1", "atm1:p5"], atm: {phy: oc3, aal: aal34, encap: llc}`, 1),
			"core.yaml:23: topology.links: r1:atm0 and r3:atm1 share a PVC but their links' aal/encap differ (aal5/llc on line 19, aal34/llc); make them equal"},
		{"variant", strings.ReplaceAll(atmCore(t, ""), "encap: llc", "encap: vcmux") +
			"variants:\n  - {name: labelled, set: [{node: r2, mpls: true}]}\n",
			"core.yaml:21: topology.links: variant labelled: r2:atm1 is an MPLS router's interface on a VC-mux ATM link"},
	} {
		err := validateErr(tc.lab)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: errors lack %q:\n%v", tc.name, tc.want, err)
		}
	}
}

// validateErr is what atmlab validate reports for a lab: the lab as
// written, then each variant.
func validateErr(src string) error {
	lab, err := Parse("core.yaml", []byte(src))
	if err == nil {
		err = lab.CheckVariants(lab.Measured())
	}
	return err
}
