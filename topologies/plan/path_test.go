package plan_test

import (
	"slices"
	"testing"

	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/plan"
)

// ShortestPath takes the fewest links, the earlier link on a tie, in order
// from the start; nothing when no links join the two or they are one node.
func TestShortestPathFewestLinksEarlierFirst(t *testing.T) {
	link := func(a, b string, line int) *topologies.Link {
		return &topologies.Link{A: topologies.Endpoint{Node: a, Port: "p"}, B: topologies.Endpoint{Node: b, Port: "p"}, Line: line}
	}
	// a ring a-b-c-d-a, and a spur d-e; c is two links from a either way.
	ab, bc, cd, da, de := link("a", "b", 1), link("b", "c", 2), link("d", "c", 3), link("d", "a", 4), link("e", "d", 5)
	links := []*topologies.Link{ab, bc, cd, da, de}
	lines := func(p []*topologies.Link) []int {
		var out []int
		for _, l := range p {
			out = append(out, l.Line)
		}
		return out
	}
	for _, c := range []struct {
		from, to string
		want     []int
	}{
		{"a", "c", []int{1, 2}}, {"c", "a", []int{2, 1}}, {"e", "b", []int{5, 3, 2}}, {"a", "d", []int{4}},
		{"a", "a", nil}, {"a", "z", nil},
	} {
		if got := lines(plan.ShortestPath(links, c.from, c.to)); !slices.Equal(got, c.want) {
			t.Errorf("ShortestPath(%s, %s) = lines %v, want %v", c.from, c.to, got, c.want)
		}
	}
	if got := de.Other("d"); got != "e" || ab.Other("z") != "" {
		t.Errorf("Other: %q", got)
	}
}
