package theory

import (
	"os/exec"
	"strings"
	"testing"
)

// Theory computes ceilings from a resolved lab's values and the models'
// billing: it must not depend on the builder (devices) or the runtime
// (kernel), so that calc, the explorer and the report get theory without
// either. Checked with go list -deps, the package's tests' imports aside.
func TestImportsNoBuilder(t *testing.T) {
	const mod = "github.com/atmlab/atmlab/"
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) == 0 || deps[len(deps)-1] != mod+"harness/theory" {
		t.Fatalf("go list -deps did not list harness/theory last: %q", out)
	}
	for _, p := range deps {
		if rel, ok := strings.CutPrefix(p, mod); ok && (rel == "devices" || strings.HasPrefix(rel, "devices/") || rel == "kernel" || strings.HasPrefix(rel, "kernel/")) {
			t.Errorf("harness/theory depends on %s: it takes a resolved lab's values (topologies) and the models' billing, never the builder or the runtime", p)
		}
	}
}
