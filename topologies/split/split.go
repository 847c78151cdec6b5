// Package split is a lab cut into parts (the lab file's parts:): which of
// its links may be cut and why not the others (Candidates), and the plan
// of a split lab (Of): its parts and the links between them, each with
// the lookahead that lets the parts run apart. The virtual-time runner,
// the real-time cut ports and the placement of parts all read a Plan.
package split

import (
	"fmt"
	"time"

	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/labyaml"
)

// Part is one part of a split lab: its name and nodes, as parts: lists them.
type Part = topologies.Part

// Plan is a lab cut into parts.
type Plan struct {
	Lab   *topologies.Lab
	Parts []Part // in file order
	Cuts  []Cut  // in the order of the lab's links
	of    map[string]string
}

// Cut is a link whose ends are in two parts.
type Cut struct {
	Link      *topologies.Link
	A, B      string        // the parts of Link.A's and Link.B's nodes
	Lookahead time.Duration // the link's smallest one-way delay (Delay)
}

// Of returns the plan of a lab with parts:, nil and no error for a lab
// without; an error (each problem an *labyaml.Error) if a link between
// two parts may not be cut, which a variant of a valid lab may make so
// (a cut link's delay set to 0).
func Of(lab *topologies.Lab) (*Plan, error) {
	if len(lab.Parts) == 0 {
		return nil, nil
	}
	if errs := Check(lab); len(errs) > 0 {
		return nil, labyaml.JoinByLine(errs)
	}
	p := &Plan{Lab: lab, of: map[string]string{}}
	for _, part := range lab.Parts {
		p.Parts = append(p.Parts, *part)
		for _, n := range part.Nodes {
			p.of[n] = part.Name
		}
	}
	for _, l := range lab.Links {
		a, b := p.of[l.A.Node], p.of[l.B.Node]
		if a != b {
			p.Cuts = append(p.Cuts, Cut{Link: l, A: a, B: b, Lookahead: Delay(l)})
		}
	}
	return p, nil
}

// PartOf returns the name of the part node is in, "" if none.
func (p *Plan) PartOf(node string) string { return p.of[node] }

// Lookahead is the smallest lookahead of the plan's cuts: how far in
// model time every part may run ahead of the others; 0 for a plan with no
// cut (parts that never talk).
func (p *Plan) Lookahead() time.Duration {
	var la time.Duration
	for i, c := range p.Cuts {
		if i == 0 || c.Lookahead < la {
			la = c.Lookahead
		}
	}
	return la
}

// Delay is a link's smallest one-way delay: its propagation plus its
// delay impairment less that impairment's jitter (never below the
// propagation), the smaller of its two directions. A frame sent on the
// link at t reaches the far end at t + Delay at the earliest, whatever
// its queue and rate add.
func Delay(l *topologies.Link) time.Duration {
	one := func(im topologies.Impair) time.Duration {
		return l.Propagation + max(0, im.Delay-im.Jitter)
	}
	return min(one(l.AB.Impair), one(l.BA.Impair))
}

// Verdict says whether a link may be cut and why (not).
type Verdict struct {
	Link      *topologies.Link
	Cuttable  bool
	Why       string
	Lookahead time.Duration // Delay(Link)
}

// String is the verdict as validate prints it: "link A-B (line N) may
// (not) be cut: why".
func (v Verdict) String() string {
	word := "may not be cut"
	if v.Cuttable {
		word = "may be cut"
	}
	return fmt.Sprintf("link %s-%s (line %d) %s: %s", v.Link.A, v.Link.B, v.Link.Line, word, v.Why)
}

// Candidates returns a verdict for each of the lab's links, in file order.
// A link may be cut when it is a point-to-point Ethernet link (between
// hosts, switches, routers and wires) whose one-way delay is above 0.
func Candidates(lab *topologies.Lab) []Verdict {
	out := make([]Verdict, 0, len(lab.Links))
	for _, l := range lab.Links {
		out = append(out, verdict(lab, l))
	}
	return out
}

func verdict(lab *topologies.Lab, l *topologies.Link) Verdict {
	v := Verdict{Link: l, Lookahead: Delay(l)}
	for _, e := range []topologies.Endpoint{l.A, l.B} {
		n := lab.Node(e.Node)
		if n == nil {
			continue
		}
		switch n.Kind {
		case topologies.KindHub:
			v.Why = fmt.Sprintf("%s is a hub: the link is part of its shared medium, where carrier sense and collisions need every station at the same instant", n.Name)
			return v
		case topologies.KindATMSwitch:
			v.Why = fmt.Sprintf("%s is an atm-switch: the link feeds its fabric, which orders the cells of all its links that arrive in one nanosecond as one decision", n.Name)
			return v
		}
	}
	switch {
	case l.ATM != nil:
		v.Why = "an ATM link: a cut carries whole Ethernet frames, not cells paced by the adapters at both ends"
	case v.Lookahead <= 0:
		v.Why = "its one-way delay is 0, and a cut needs one above 0 (the lookahead by which the parts run apart); give the link a cable: length or an impair: delay"
	default:
		v.Cuttable = true
		v.Why = fmt.Sprintf("a point-to-point Ethernet link, one-way delay %v (the lookahead)", v.Lookahead)
	}
	return v
}

// Check returns a problem (an *labyaml.Error at the link's line, key
// parts) for each link between two parts that may not be cut; nil for a
// lab without parts:. It trusts that every node is in one part (the lab
// file's reader checks that).
func Check(lab *topologies.Lab) []error {
	if len(lab.Parts) == 0 {
		return nil
	}
	of := map[string]string{}
	for _, part := range lab.Parts {
		for _, n := range part.Nodes {
			of[n] = part.Name
		}
	}
	var errs []error
	shared := ""
	for _, n := range lab.Nodes {
		if n.Router == nil || !n.Router.Cost.SharedCPU {
			continue
		}
		if shared == "" {
			shared = n.Name
		} else if of[n.Name] != of[shared] {
			errs = append(errs, &labyaml.Error{File: lab.File, Line: n.Line, Key: "parts",
				Msg: fmt.Sprintf("router %s shares one CPU with router %s (cost: {cpu: shared}), which is in part %s: routers sharing a CPU must be in one part", n.Name, shared, of[shared])})
		}
	}
	for _, l := range lab.Links {
		a, b := of[l.A.Node], of[l.B.Node]
		if a == b || a == "" || b == "" {
			continue
		}
		if v := verdict(lab, l); !v.Cuttable {
			errs = append(errs, &labyaml.Error{File: lab.File, Line: l.Line, Key: "parts",
				Msg: fmt.Sprintf("link %s-%s joins parts %s and %s but may not be cut: %s; put both ends in one part", l.A, l.B, a, b, v.Why)})
		}
	}
	return errs
}
