// Package plan decides what a checked lab leaves to be worked out: every
// PVC (hosts' VCs, atm-switches' cross-connects), hosts' default routes,
// and what only a walk over the links finds: loops of switches, PVCs
// whose ends disagree, native AAL tests without a native PVC.
// ShortestPath is the walk they share. Labels are the routers' own, made
// when devices builds them.
package plan

import (
	"slices"

	"github.com/atmlab/atmlab/topologies"
)

// ShortestPath returns the fewest links from node from to node to among
// links, in order from from (breadth first, ties to the earlier link), or
// nil if none join them or from is to. PVC planning, the loop check and
// the lessons' paths all walk a lab with it.
func ShortestPath(links []*topologies.Link, from, to string) []*topologies.Link {
	if from == to {
		return nil
	}
	prev := map[string]*topologies.Link{from: nil}
	queue := []string{from}
	for len(queue) > 0 && prev[to] == nil {
		cur := queue[0]
		queue = queue[1:]
		for _, l := range links {
			next := l.Other(cur)
			if next == "" {
				continue
			}
			if _, seen := prev[next]; !seen {
				prev[next] = l
				queue = append(queue, next)
			}
		}
	}
	if prev[to] == nil {
		return nil
	}
	var path []*topologies.Link
	for n := to; n != from; n = prev[n].Other(n) {
		path = append(path, prev[n])
	}
	slices.Reverse(path)
	return path
}
