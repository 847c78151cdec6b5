package control

import (
	"context"
	"testing"
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
