package report

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// plotting is the plotting library's module: its packages are what only
// the report may import.
const plotting = "gonum.org/v1/plot"

// TestOnlyReportPlots checks with go list, under each build tag the
// project uses, that of atmlab's packages harness/report alone imports a
// package of gonum.org/v1/plot directly (its tests' imports included),
// and that only it and cmd/atmlab, which links it, depend on one at all
// (go list -deps): the test tool, theory, the runner, the explorer and
// the live view stay free of plotting.
func TestOnlyReportPlots(t *testing.T) {
	const mod = "github.com/atmlab/atmlab/"
	for _, tags := range []string{"", "integration", "atmlab_stub"} {
		out, err := exec.Command("go", "list", "-e", "-tags", tags, "-f",
			"{{.ImportPath}}|{{join .Imports \" \"}} {{join .TestImports \" \"}} {{join .XTestImports \" \"}}|{{join .Deps \" \"}}", mod+"...").Output()
		if err != nil {
			t.Fatalf("go list -tags %q: %v: %s", tags, err, stderrOf(err))
		}
		var direct, deps []string
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			f := strings.Split(line, "|")
			if len(f) != 3 {
				t.Fatalf("go list line %q", line)
			}
			pkg := strings.TrimPrefix(f[0], mod)
			if slices.ContainsFunc(strings.Fields(f[1]), plots) {
				direct = append(direct, pkg)
			}
			if slices.ContainsFunc(strings.Fields(f[2]), plots) {
				deps = append(deps, pkg)
			}
		}
		if !slices.Equal(direct, []string{"harness/report"}) || !slices.Equal(deps, []string{"cmd/atmlab", "harness/report"}) {
			t.Errorf("-tags %q: %s imported by %q (want harness/report only), depended on by %q (want cmd/atmlab and harness/report)", tags, plotting, direct, deps)
		}
	}
}

func plots(pkg string) bool { return pkg == plotting || strings.HasPrefix(pkg, plotting+"/") }

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return strings.TrimSpace(string(ee.Stderr))
	}
	return ""
}
