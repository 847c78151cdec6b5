package topologies

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// The lab-file packages (topologies and every package under it) read and
// resolve a lab without the models: of the project's other packages they
// import only value packages (the cell codec, units, the PHY table), never
// a device package (emulator, atm, ether, router, ...), which package
// devices builds from a resolved lab.
func TestImportsNoDevice(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	out, err := exec.Command(goTool, "list", "-deps", "-f", "{{.ImportPath}}", "./...").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	const mod = "github.com/atmlab/atmlab/"
	allowed := []string{"cells", "cells/internal/crc", "emulator/units", "emulator/atm/phy", "topologies"}
	var deps []string
	for _, p := range strings.Fields(string(out)) {
		if rel, ok := strings.CutPrefix(p, mod); ok {
			deps = append(deps, rel)
			if !slices.Contains(allowed, rel) && !strings.HasPrefix(rel, "topologies/") {
				t.Errorf("topologies imports %s: only %s and topologies/... may be imported (devices builds the models)", p, strings.Join(allowed, ", "))
			}
		}
	}
	if !slices.Contains(deps, "topologies") {
		t.Fatalf("go list -deps did not list topologies itself: %q", out)
	}
}
