package plan

import (
	"fmt"
	"strings"

	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/labyaml"
)

// maxLoopWarnings is how many loops are named one by one; the rest are
// counted in one more warning.
const maxLoopWarnings = 10

// Loops names the loops of switches and hubs: a link from a switch
// to itself, two links between the same two, a ring. They are valid (real
// switches without spanning tree can be cabled so), but one broadcast then
// circles the loop forever, a storm. A link closes a loop when its ends are
// already joined by the links before it; the loop is that link and the
// path of earlier links between its ends.
func Loops(lab *topologies.Lab) []*labyaml.Error {
	bridges := func(name string) bool {
		n := lab.Node(name)
		return n != nil && (n.Kind == topologies.KindSwitch || n.Kind == topologies.KindHub)
	}
	parent := unionFind{} // over the bridges
	find := parent.find
	var forest []*topologies.Link // links that joined two parts
	var out []*labyaml.Error
	more := 0
	warn := func(l *topologies.Link, format string, args ...any) {
		if len(out) == maxLoopWarnings {
			more++
			return
		}
		out = append(out, &labyaml.Error{File: lab.File, Line: l.Line, Key: "topology.links", Msg: fmt.Sprintf(format, args...) +
			": one broadcast circles it forever (a storm), as between real switches without spanning tree; remove a link to break it"})
	}
	for _, l := range lab.Links {
		a, b := l.A.Node, l.B.Node
		if l.ATM != nil || !bridges(a) || !bridges(b) {
			continue
		}
		if a == b {
			warn(l, "loop: link %s-%s joins %s to itself", l.A, l.B, a)
			continue
		}
		if ra, rb := find(a), find(b); ra != rb {
			parent[ra] = rb
			forest = append(forest, l)
			continue
		}
		if len(out) == maxLoopWarnings {
			more++
			continue
		}
		// The path from b back to a through the forest.
		nodes, lines := []string{b}, []string{}
		path := ShortestPath(forest, a, b)
		for i, x := len(path)-1, b; i >= 0; i-- {
			x = path[i].Other(x)
			nodes = append(nodes, x)
			lines = append(lines, fmt.Sprint(path[i].Line))
		}
		lines = append(lines, fmt.Sprint(l.Line))
		if len(nodes) == 2 {
			warn(l, "loop: links on lines %s and %s both join %s and %s", lines[0], lines[1], a, b)
		} else {
			warn(l, "loop: %s-%s closes a ring %s-%s (links on lines %s)", l.A, l.B, strings.Join(nodes, "-"), b, strings.Join(lines, ", "))
		}
	}
	if more > 0 {
		out = append(out, &labyaml.Error{File: lab.File, Line: out[len(out)-1].Line, Key: "topology.links", Msg: fmt.Sprintf("loop: %d more links close loops of switches", more)})
	}
	return out
}

// unionFind maps a node to its set's representative (path-compressed);
// union is parent[find(a)] = find(b).
type unionFind map[string]string

func (u unionFind) find(x string) string {
	p, ok := u[x]
	if !ok || p == x {
		u[x] = x
		return x
	}
	r := u.find(p)
	u[x] = r
	return r
}
