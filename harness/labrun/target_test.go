package labrun

import (
	"testing"

	"github.com/atmlab/atmlab/internal/labtest"
	"github.com/atmlab/atmlab/topologies/labfile"
)

// A test from a host to itself runs over its loopback; between two hosts
// it goes to the far host's address (theory's TestLoopbackPoint: the
// loopback has no ceiling).
func TestLoopbackTarget(t *testing.T) {
	lab, err := labfile.Parse("l.yaml", []byte(labtest.Lab("two-hosts", "l")))
	if err != nil {
		t.Fatal(err)
	}
	if target(lab, "h1", "h1") != "127.0.0.1" || target(lab, "h1", "h2") != "10.0.0.2" {
		t.Errorf("targets %s, %s", target(lab, "h1", "h1"), target(lab, "h1", "h2"))
	}
}
