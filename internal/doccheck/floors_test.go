package doccheck

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// The floors of the house live in one place, docs/design.md's "Layout and
// dependencies": a "floor NAME: ..." line, then a line per package on it.
// A package imports only packages on its own floor or below; the last
// floor, tests, stands beside the others: its packages may import any
// floor, and only tests import them.

const (
	module      = "github.com/atmlab/atmlab/"
	layoutTitle = "## Layout and dependencies"
	testsFloor  = "tests"
)

// floor is one floor of the layout, as docs/design.md lists it.
type floor struct {
	name     string
	packages []string // relative to the module, no trailing slash
}

// readFloors returns the floors that docs/design.md's layout section
// lists, from the top, and the section's text.
func readFloors(t *testing.T) ([]floor, string) {
	t.Helper()
	path := filepath.Join(root(t), "docs", "design.md")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	i := strings.Index(text, "\n"+layoutTitle+"\n")
	if i < 0 {
		t.Fatalf("%s: no section %q", path, layoutTitle)
	}
	section := text[i+len(layoutTitle)+2:]
	if j := strings.Index(section, "\n## "); j >= 0 {
		section = section[:j]
	}
	floors, err := parseFloors(section)
	if err != nil {
		t.Fatalf("%s, %q: %v", path, layoutTitle, err)
	}
	return floors, section
}

// parseFloors reads the floor lines ("    floor NAME: what it holds") and
// the package lines under each ("    path   what it holds"); deeper
// indented lines continue a package's description.
func parseFloors(section string) ([]floor, error) {
	var floors []floor
	seen := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(section))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, "    ")
		if !ok || rest == "" || rest[0] == ' ' {
			continue
		}
		if name, ok := strings.CutPrefix(rest, "floor "); ok {
			name, _, ok = strings.Cut(name, ":")
			if !ok {
				return nil, fmt.Errorf("line %d: %q: a floor line reads \"floor NAME: what it holds\"", n, line)
			}
			floors = append(floors, floor{name: name})
			continue
		}
		if len(floors) == 0 {
			return nil, fmt.Errorf("line %d: package line %q before the first floor line", n, line)
		}
		pkg := strings.TrimSuffix(strings.Fields(rest)[0], "/")
		if f, dup := seen[pkg]; dup {
			return nil, fmt.Errorf("line %d: %s listed twice (already on floor %s)", n, pkg, f)
		}
		last := &floors[len(floors)-1]
		seen[pkg] = last.name
		last.packages = append(last.packages, pkg)
	}
	if len(floors) == 0 {
		return nil, fmt.Errorf("no floor lines (\"    floor NAME: what it holds\")")
	}
	return floors, nil
}

// checkFloors returns one message per import that climbs a floor, per
// package with no floor, per listed package that does not exist and per
// production import of a tests-floor package. graph maps each of the
// module's packages (relative paths) to the module packages it imports.
// docs holds each package's synopsis (its doc comment's first sentence),
// for the line a package with no floor is to get.
func checkFloors(floors []floor, graph map[string][]string, docs map[string]string) []string {
	level := map[string]int{} // 0 is the top floor
	name := map[string]string{}
	var order []string
	for i, f := range floors {
		if f.name != testsFloor {
			order = append(order, f.name)
		}
		for _, p := range f.packages {
			level[p], name[p] = i, f.name
		}
	}
	where := fmt.Sprintf("docs/design.md's %q, under the floor it belongs on (from the top: %s; or %s, for packages only tests import)",
		strings.TrimPrefix(layoutTitle, "## "), strings.Join(order, ", "), testsFloor)
	var problems []string
	pkgs := make([]string, 0, len(graph))
	for p := range graph {
		pkgs = append(pkgs, p)
	}
	slices.Sort(pkgs)
	for _, p := range pkgs {
		if _, ok := level[p]; !ok {
			problems = append(problems, noFloor(p, floors, level, graph, docs[p], where))
		}
	}
	for _, f := range floors {
		for _, p := range f.packages {
			if _, ok := graph[p]; !ok {
				problems = append(problems, fmt.Sprintf("docs/design.md puts %s on floor %s, but there is no such package: remove or rename its line", p, f.name))
			}
		}
	}
	for _, p := range pkgs {
		lp, ok := level[p]
		if !ok {
			continue
		}
		for _, q := range graph[p] {
			lq, ok := level[q]
			switch {
			case !ok:
				// q has no floor; reported above.
			case name[q] == testsFloor && name[p] != testsFloor:
				problems = append(problems, fmt.Sprintf("%s imports %s, which is on floor %s: only tests may import it (move the import into a _test.go file, or %s to a floor)", p, q, testsFloor, q))
			case name[p] != testsFloor && lq < lp:
				problems = append(problems, fmt.Sprintf("%s (floor %s) imports %s (floor %s, above it): imports point down only; move the code %s needs down, or %s up, in docs/design.md's %q",
					p, name[p], q, name[q], p, p, strings.TrimPrefix(layoutTitle, "## ")))
			}
		}
	}
	return problems
}

// noFloor says what to add for a package with no floor line: the line
// itself, under the lowest floor its imports and importers allow (its
// synopsis as what it holds), or, where none does, which of them rule
// every floor out.
func noFloor(p string, floors []floor, level map[string]int, graph map[string][]string, doc, where string) string {
	lo, hi := len(floors)-1, 0 // the lowest floor its imports allow, the highest its importers do
	if floors[lo].name == testsFloor {
		lo--
	}
	var down, up string
	for _, q := range graph[p] {
		if l, ok := level[q]; ok && floors[l].name != testsFloor && l < lo {
			lo, down = l, q
		}
	}
	for r, imports := range graph {
		if l, ok := level[r]; ok && floors[l].name != testsFloor && l > hi && slices.Contains(imports, p) {
			hi, up = l, r
		}
	}
	if hi > lo {
		return fmt.Sprintf("package %s has no floor, and none fits: it imports %s (floor %s) and %s (floor %s) imports it; move code so that imports point down, then add a line for it in %s",
			p, down, floors[lo].name, up, floors[hi].name, where)
	}
	// "Package new runs what is new." holds "runs what is new".
	if _, rest, ok := strings.Cut(doc, " "); ok && strings.HasPrefix(doc, "Package ") {
		_, doc, _ = strings.Cut(rest, " ")
	}
	if doc = strings.TrimSuffix(doc, "."); doc == "" {
		doc = "WHAT IT HOLDS"
	}
	return fmt.Sprintf("package %s has no floor: add this line to docs/design.md's %q, under \"floor %s:\" (the lowest floor its imports allow):\n    %-20s %s",
		p, strings.TrimPrefix(layoutTitle, "## "), floors[lo].name, p, doc)
}

// moduleGraph returns the module's packages (relative paths) with the
// module packages each imports, its tests aside, from go list -deps.
func moduleGraph(t *testing.T) (graph map[string][]string, docs map[string]string) {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	cmd := exec.Command(goTool, "list", "-deps", "-f", "{{.ImportPath}}\t{{.Doc}}\t{{join .Imports \" \"}}", "./...")
	cmd.Dir = root(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps ./...: %v: %s", err, stderrOf(err))
	}
	graph, docs = map[string][]string{}, map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, rest, _ := strings.Cut(line, "\t")
		doc, deps, _ := strings.Cut(rest, "\t")
		p, ok := strings.CutPrefix(path, module)
		if !ok {
			continue
		}
		imports := []string{}
		for _, q := range strings.Fields(deps) {
			if q, ok := strings.CutPrefix(q, module); ok {
				imports = append(imports, q)
			}
		}
		graph[p], docs[p] = imports, doc
	}
	if len(graph["cmd/atmlab"]) == 0 {
		t.Fatalf("go list -deps ./... did not list cmd/atmlab's imports:\n%s", out)
	}
	return graph, docs
}

// stderrOf returns what a failed command wrote to stderr, if exec kept it.
func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}

// TestImportFloors checks the import rules docs/design.md states: every
// package of the module stands on one of its floors, and no package
// imports one on a floor above its own.
func TestImportFloors(t *testing.T) {
	floors, _ := readFloors(t)
	graph, docs := moduleGraph(t)
	for _, p := range checkFloors(floors, graph, docs) {
		t.Error(p)
	}
}

// TestImportFloorsSentence keeps the design page's one-line summary of the
// floors ("Imports point one way: cmd -> pages -> ...") in the order of
// its floor lines.
func TestImportFloorsSentence(t *testing.T) {
	floors, section := readFloors(t)
	var names []string
	for _, f := range floors {
		if f.name != testsFloor {
			names = append(names, f.name)
		}
	}
	want := "Imports point one way: " + strings.Join(names, " -> ") + "."
	if flat := strings.Join(strings.Fields(section), " "); !strings.Contains(flat, want) {
		t.Errorf("docs/design.md's %q does not say %q (the floor lines' order)", layoutTitle, want)
	}
	if floors[len(floors)-1].name != testsFloor {
		t.Errorf("docs/design.md's last floor is %s, want %s (packages only tests import)", floors[len(floors)-1].name, testsFloor)
	}
}

// TestCheckFloorsFindsClimbs runs the checker on a small house: an import
// up a floor, a package with no floor, a line for a package that is gone
// and a production import of a test helper each give a message naming it;
// a package with no floor is told the very line to add, and where, or
// why no floor fits it.
func TestCheckFloorsFindsClimbs(t *testing.T) {
	floors := []floor{
		{name: "cmd", packages: []string{"cmd/x"}},
		{name: "harness", packages: []string{"harness/run", "harness/gone"}},
		{name: "cells", packages: []string{"cells"}},
		{name: testsFloor, packages: []string{"internal/fixture"}},
	}
	graph := map[string][]string{
		"cmd/x":            {"harness/run", "cells"},
		"harness/run":      {"cells"},
		"cells":            {"harness/run", "internal/fixture"},
		"internal/fixture": {"cmd/x"},
		"newpkg":           {"cells"},
		"harness/new":      {"harness/run", "internal/fixture"},
		"harness/stuck":    {"harness/run"},
	}
	graph["cells"] = append(graph["cells"], "harness/stuck")
	docs := map[string]string{"harness/new": "Package new runs what is new."}
	got := checkFloors(floors, graph, docs)
	want := []string{
		"package harness/new has no floor: add this line to docs/design.md's \"Layout and dependencies\", under \"floor harness:\" (the lowest floor its imports allow):\n    harness/new          runs what is new",
		"package harness/stuck has no floor, and none fits: it imports harness/run (floor harness) and cells (floor cells) imports it",
		"package newpkg has no floor: add this line to docs/design.md's \"Layout and dependencies\", under \"floor cells:\" (the lowest floor its imports allow):\n    newpkg               WHAT IT HOLDS",
		"docs/design.md puts harness/gone on floor harness, but there is no such package",
		"cells (floor cells) imports harness/run (floor harness, above it)",
		"cells imports internal/fixture, which is on floor tests: only tests may import it",
	}
	if len(got) != len(want) {
		t.Fatalf("checkFloors = %d messages, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("checkFloors message %d = %q, want it to start %q", i, got[i], want[i])
		}
	}
	clean := map[string][]string{"cmd/x": {"harness/run"}, "harness/run": {"cells"}, "harness/gone": nil, "cells": nil, "internal/fixture": {"cmd/x"}}
	if got := checkFloors(floors, clean, nil); len(got) != 0 {
		t.Errorf("checkFloors(a house that keeps the rules) = %q, want none", got)
	}
}
