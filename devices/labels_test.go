package devices

import (
	"slices"
	"strings"
	"testing"

	"github.com/atmlab/atmlab/emulator/sched"
	"github.com/atmlab/atmlab/topologies/labfile"
)

// A chain of three MPLS routers: the ingress pushes, the middle swaps or
// pops (penultimate hop), and a plain router has no bindings.
func TestLabelsListEachMPLSRoutersBindings(t *testing.T) {
	lab, err := labfile.Parse("mpls.yaml", []byte(`name: mpls
topology:
  nodes:
    h1: {kind: host, ipv4: 10.0.0.1/24, routes: [{to: 0.0.0.0/0, via: 10.0.0.254}]}
    h2: {kind: host, ipv4: 10.0.3.2/24, routes: [{to: 0.0.0.0/0, via: 10.0.3.254}]}
    r1: {kind: router, mpls: true, interfaces: {eth0: {ipv4: 10.0.0.254/24}, eth1: {ipv4: 10.0.1.1/24}}}
    r2: {kind: router, mpls: true, interfaces: {eth0: {ipv4: 10.0.1.2/24}, eth1: {ipv4: 10.0.2.1/24}}}
    r3: {kind: router, interfaces: {eth0: {ipv4: 10.0.2.2/24}, eth1: {ipv4: 10.0.3.254/24}}}
  links:
    - endpoints: ["h1:eth0", "r1:eth0"]
    - endpoints: ["r1:eth1", "r2:eth0"]
    - endpoints: ["r2:eth1", "r3:eth0"]
    - endpoints: ["r3:eth1", "h2:eth0"]
`))
	if err != nil {
		t.Fatal(err)
	}
	labels := Build(lab, sched.New()).Labels()
	if _, ok := labels["r3"]; ok {
		t.Errorf("r3 (no MPLS) has labels: %q", labels["r3"])
	}
	// r1 pushes r2's label for h2's subnet; r2, the last MPLS hop before
	// the plain r3, pops it. (r2's own subnets are implicit null: no push.)
	if !slices.ContainsFunc(labels["r1"], func(s string) bool { return strings.HasPrefix(s, "push ") && strings.HasSuffix(s, " for 10.0.3.0/24") }) ||
		slices.ContainsFunc(labels["r1"], func(s string) bool { return strings.HasSuffix(s, " for 10.0.2.0/24") }) {
		t.Errorf("r1's pushes: %q", labels["r1"])
	}
	if !slices.ContainsFunc(labels["r2"], func(s string) bool { return strings.HasSuffix(s, ": pop via 10.0.2.2 (eth1)") }) {
		t.Errorf("r2 does not pop toward r3: %q", labels["r2"])
	}
}
