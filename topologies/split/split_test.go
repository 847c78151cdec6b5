package split_test

import (
	"strings"
	"testing"
	"time"

	"github.com/atmlab/atmlab/internal/labtest"
	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/labfile"
	"github.com/atmlab/atmlab/topologies/split"
)

func parse(t *testing.T, src string) *topologies.Lab {
	t.Helper()
	lab, err := labfile.Parse("s.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return lab
}

// The plan of a split lab: its parts in file order, each node's part, and
// the one cut with the link's delay as its lookahead.
func TestOfPlansPartsAndCuts(t *testing.T) {
	lab := parse(t, labtest.Lab("split-two-switches", "s"))
	p, err := split.Of(lab)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Parts) != 2 || p.Parts[0].Name != "left" || strings.Join(p.Parts[1].Nodes, ",") != "h3,h4,sw2" {
		t.Fatalf("parts = %+v", p.Parts)
	}
	if p.PartOf("h2") != "left" || p.PartOf("sw2") != "right" || p.PartOf("nope") != "" {
		t.Fatalf("PartOf: h2 %q sw2 %q nope %q", p.PartOf("h2"), p.PartOf("sw2"), p.PartOf("nope"))
	}
	if len(p.Cuts) != 1 {
		t.Fatalf("cuts = %+v", p.Cuts)
	}
	c := p.Cuts[0]
	if c.Link.A.String() != "sw1:p9" || c.A != "left" || c.B != "right" || c.Lookahead != time.Millisecond || p.Lookahead() != time.Millisecond {
		t.Fatalf("cut = %+v, lookahead %v", c, p.Lookahead())
	}
	if p, err := split.Of(parse(t, labtest.Lab("two-hosts-switch", "s"))); p != nil || err != nil {
		t.Fatalf("a lab without parts: %+v, %v", p, err)
	}
}

// Delay is the smaller direction's propagation plus delay less jitter.
func TestDelayIsTheSmallerDirectionsFloor(t *testing.T) {
	l := &topologies.Link{Propagation: 5 * time.Microsecond,
		AB: topologies.Direction{Impair: topologies.Impair{Delay: 3 * time.Millisecond, Jitter: time.Millisecond}},
		BA: topologies.Direction{Impair: topologies.Impair{Delay: 4 * time.Millisecond}}}
	if d := split.Delay(l); d != 2*time.Millisecond+5*time.Microsecond {
		t.Fatalf("Delay = %v, want 2.005ms", d)
	}
	l.AB.Impair.Jitter = 9 * time.Millisecond // never below the propagation
	if d := split.Delay(l); d != 5*time.Microsecond {
		t.Fatalf("Delay = %v, want 5µs", d)
	}
}

// Candidates says of every link whether it may be cut and why: a
// point-to-point Ethernet link with a delay may; a hub's, an
// atm-switch's, any ATM link and a link without delay may not.
func TestCandidatesSayWhy(t *testing.T) {
	for _, tc := range []struct {
		lab  string
		want []string
	}{
		{labtest.Lab("split-two-switches", "s"), []string{
			"link h1:eth0-sw1:p1 (line 14) may not be cut: its one-way delay is 0",
			"", "", "",
			"link sw1:p9-sw2:p9 (line 18) may be cut: a point-to-point Ethernet link, one-way delay 1ms (the lookahead)"}},
		{labtest.Lab("three-hosts-hub", "s"), []string{"may not be cut: hub1 is a hub: the link is part of its shared medium"}},
		{labtest.Lab("two-hosts-atm-switch", "s"), []string{"may not be cut: atm1 is an atm-switch: the link feeds its fabric"}},
		{labtest.Lab("two-hosts-atm", "s"), []string{"may not be cut: an ATM link"}},
	} {
		vs := split.Candidates(parse(t, tc.lab))
		for i, want := range tc.want {
			if !strings.Contains(vs[i].String(), want) {
				t.Errorf("verdict %d: %q, want %q", i, vs[i], want)
			}
			if vs[i].Cuttable != strings.Contains(want, "may be cut") && want != "" {
				t.Errorf("verdict %d: Cuttable %v for %q", i, vs[i].Cuttable, want)
			}
		}
	}
}

// Routers sharing one CPU share its queue: they may not be in two parts.
func TestRoutersSharingACPUStayInOnePart(t *testing.T) {
	src := labtest.Set(labtest.Lab("mpls-two-routers", "s",
		"parts: {left: [h1, r1], right: [r2, h2]}"),
		"topology.nodes.r1.cost", "{ip: 30us, cpu: shared}",
		"topology.nodes.r2.cost", "{ip: 30us, cpu: shared}",
		"topology.links[1].impair", "{delay: 1ms}")
	_, err := labfile.Parse("s.yaml", []byte(src))
	if err == nil || !strings.Contains(err.Error(), "parts: router r2 shares one CPU with router r1 (cost: {cpu: shared}), which is in part left") {
		t.Fatalf("shared CPU across parts: %v", err)
	}
}
