package labfile

import (
	"strings"
	"testing"
)

// partsLab is two hosts on each of two switches joined by sw1:p9-sw2:p9
// (line 12, its impair: given), a hub on sw2 (line 13), and parts as given.
func partsLab(impair, parts string) string {
	return `name: parts
topology:
  nodes:
    h1: {kind: host, ipv4: 10.0.0.1/24}
    h3: {kind: host, ipv4: 10.0.0.3/24}
    sw1: {kind: switch}
    sw2: {kind: switch}
    hub1: {kind: hub}
  links:
    - {endpoints: ["h1:eth0", "sw1:p1"]}
    - {endpoints: ["h3:eth0", "hub1:p1"]}
    - {endpoints: ["sw1:p9", "sw2:p9"]` + impair + `}
    - {endpoints: ["sw2:p1", "hub1:p2"]}
parts:
` + parts
}

// A lab with parts: keeps them in file order, each node in one.
func TestPartsDecodeInFileOrder(t *testing.T) {
	lab, err := Parse("p.yaml", []byte(partsLab(", impair: {delay: 1ms}", "  right: [sw2, hub1, h3]\n  left: [h1, sw1]\n")))
	if err != nil {
		t.Fatal(err)
	}
	if len(lab.Parts) != 2 || lab.Parts[0].Name != "right" || strings.Join(lab.Parts[0].Nodes, ",") != "sw2,hub1,h3" ||
		lab.Parts[1].Name != "left" || strings.Join(lab.Parts[1].Nodes, ",") != "h1,sw1" || lab.Parts[1].Line != 16 {
		t.Fatalf("parts = %+v %+v", lab.Parts[0], lab.Parts[1])
	}
	v, err := lab.WithVariant("base")
	if err != nil || len(v.Parts) != 2 || v.Parts[0] == lab.Parts[0] {
		t.Fatalf("a variant's parts: %v %+v (want copies)", err, v.Parts)
	}
}

// Every problem with parts: comes back at its line: an unknown node, a
// node in two parts, a node in none, a link between parts that may not be
// cut and why.
func TestPartsProblemsAtTheirLines(t *testing.T) {
	for _, tc := range []struct{ impair, parts, want string }{
		{"", "  left: [h1, sw1, hx]\n  right: [sw2, hub1, h3]\n", "p.yaml:15: parts.left: no node named \"hx\" in topology.nodes"},
		{"", "  left: [h1, sw1, sw2]\n  right: [sw2, hub1, h3]\n", "p.yaml:16: parts.right: node sw2 is already in part left (line 15); a node is in one part"},
		{"", "  left: [h1, sw1]\n  right: [sw2, hub1]\n", "p.yaml:15: parts: node h3 (line 5) is in no part; list it under one"},
		{"", "  left: [h1, sw1]\n  right: [sw2, hub1, h3]\n", "p.yaml:12: parts: link sw1:p9-sw2:p9 joins parts left and right but may not be cut: its one-way delay is 0"},
		{", impair: {delay: 1ms, jitter: 1ms}", "  left: [h1, sw1]\n  right: [sw2, hub1, h3]\n", "its one-way delay is 0"},
		{", impair: {delay: 1ms}", "  left: [h1, sw1, sw2]\n  right: [hub1, h3]\n", "p.yaml:13: parts: link sw2:p1-hub1:p2 joins parts left and right but may not be cut: hub1 is a hub: the link is part of its shared medium"},
		{"", "  left: [h1, sw1, sw2, hub1, h3]\n", "p.yaml:15: parts: want a mapping of two or more part names"},
		{"", "  left: [h1, sw1]\n  left: [sw2, hub1, h3]\n", "p.yaml:16: parts.left: part defined twice"},
		{"", "  Left: [h1, sw1]\n  right: [sw2, hub1, h3]\n", "p.yaml:15: parts.Left: bad part name"},
		{"", "  left: []\n  right: [h1, sw1, sw2, hub1, h3]\n", "p.yaml:15: parts.left: want a list of one or more node names"},
	} {
		_, err := Parse("p.yaml", []byte(partsLab(tc.impair, tc.parts)))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("parts %q: %v, want %q", tc.parts, err, tc.want)
		}
	}
}

// A variant that takes a cut link's delay away is refused, at the link.
func TestPartsVariantMayNotUncutALink(t *testing.T) {
	src := partsLab(", impair: {delay: 1ms}", "  left: [h1, sw1]\n  right: [sw2, hub1, h3]\n") +
		"variants:\n  - {name: near, set: [{link: \"sw1:p9\", delay: 0s}]}\n"
	lab, err := Parse("p.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lab.WithVariant("near"); err == nil || !strings.Contains(err.Error(), "p.yaml:12: parts: link sw1:p9-sw2:p9 joins parts left and right but may not be cut") {
		t.Fatalf("variant near: %v", err)
	}
}
