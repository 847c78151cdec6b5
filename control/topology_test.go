package control

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/atmlab/atmlab/devices"
	"github.com/atmlab/atmlab/emulator/sched"
	"github.com/atmlab/atmlab/internal/labtest"
	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/labfile"
)

// A topology request answers the running lab's spec.
func TestControlTopology(t *testing.T) {
	_, _, path := fakeServer(t)
	s, err := QueryTopology(context.Background(), "echo", path)
	if err != nil {
		t.Fatal(err)
	}
	if s == nil || s.Lab != "echo" || len(s.Nodes) != 3 || len(s.Links) != 2 || s.Links[1].A != "h2:eth0" || s.Links[1].AB.Rate != 100e6 {
		t.Fatalf("topology reply %+v", s)
	}
}

// A running lab's topology carries its MPLS routers' label bindings, for
// atmlab inspect.
func TestControlTopologyCarriesLabels(t *testing.T) {
	lab, err := labfile.Parse("mpls.yaml", []byte(labtest.Lab("mpls-two-routers", "mpls")))
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeLab{name: "mpls", s: sched.New(), start: time.Unix(1e9, 0)}
	f.net = devices.Build(lab, f.s)
	path := filepath.Join(t.TempDir(), "mpls.sock")
	s, err := Listen(f, path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go s.Serve(ctx)
	t.Cleanup(func() { cancel(); s.Close(); s.wg.Wait() })
	v, err := QueryTopology(context.Background(), "mpls", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range v.Nodes {
		if (n.Kind == topologies.KindRouter) != (len(n.Labels) > 0) {
			t.Errorf("node %s (%s): labels %q", n.Name, n.Kind, n.Labels)
		}
	}
}
