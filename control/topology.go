package control

import (
	"context"
	"encoding/json"
	"net"

	"github.com/atmlab/atmlab/topologies"
)

// topology answers a topology request: the lab's spec with its routers'
// label bindings, for a viewer that attaches to a running lab (atmlab web,
// atmlab inspect).
func (s *Server) topology(c net.Conn) {
	spec := s.lab.Network().Lab.View()
	spec.SetLabels(s.lab.Network().Labels()) // fixed once built: safe off the loop goroutine
	json.NewEncoder(c).Encode(reply{Topology: &spec})
}

// QueryTopology asks the lab answering at path for its topology.
func QueryTopology(ctx context.Context, lab, path string) (*topologies.View, error) {
	c, _, rep, err := dial(ctx, lab, path, request{Op: "topology"})
	if err != nil {
		return nil, err
	}
	c.Close()
	return rep.Topology, nil
}
