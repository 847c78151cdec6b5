// Package scripts holds the checks of the repository's scripts and of the
// Makefile lines that run them; it has no code of its own.
package scripts

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestMakefileFuzzTargetsExist checks the Makefile's fuzz target against
// the tree: each line runs scripts/fuzz.sh on a package that has the fuzz
// target it names, and every fuzz target in the tree has its line.
func TestMakefileFuzzTargetsExist(t *testing.T) {
	mk, err := os.ReadFile("../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range checkFuzzLines(mk, "..") {
		t.Error(err)
	}
}

// TestFuzzLineCheckCatches feeds checkFuzzLines a Makefile with a target
// in the wrong package, a line that bypasses fuzz.sh, and none for a
// target the tree has: each is an error that says where and what.
func TestFuzzLineCheckCatches(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "a"), 0o755)
	os.MkdirAll(filepath.Join(root, "b"), 0o755)
	os.WriteFile(filepath.Join(root, "a", "a_test.go"), []byte("package a\nimport \"testing\"\nfunc FuzzA(f *testing.F) {}\nfunc FuzzNotOne(t *testing.T) {}\n"), 0o644)
	os.WriteFile(filepath.Join(root, "b", "b_test.go"), []byte("package b\nimport \"testing\"\nfunc FuzzB(f *testing.F) {}\nfunc FuzzC(f *testing.F) {}\n"), 0o644)
	mk := "all:\n\techo\n\nfuzz:\n\t$(FUZZ) ./a/ FuzzA\n\t$(FUZZ) ./a/ FuzzB\n\t$(GO) test -run '^$$' -fuzz FuzzC -fuzztime 30s ./b/\n\t$(FUZZ) ./a/ FuzzNotOne\n\nclean:\n"
	var got []string
	for _, err := range checkFuzzLines([]byte(mk), root) {
		got = append(got, err.Error())
	}
	want := []string{
		"Makefile:6: ./a/ has no fuzz target FuzzB (it is in ./b/)",
		"Makefile:7: a fuzz line is $(FUZZ) PKG TARGET (scripts/fuzz.sh, which fails when PKG has no TARGET), not \"$(GO) test -run '^$$' -fuzz FuzzC -fuzztime 30s ./b/\"",
		"Makefile:8: ./a/ has no fuzz target FuzzNotOne",
		"Makefile: fuzz has no line for ./b/ FuzzB: add $(FUZZ) ./b/ FuzzB",
		"Makefile: fuzz has no line for ./b/ FuzzC: add $(FUZZ) ./b/ FuzzC",
	}
	if !slices.Equal(got, want) {
		t.Errorf("checkFuzzLines =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if errs := checkFuzzLines([]byte("all:\n"), root); len(errs) != 1 || !strings.Contains(errs[0].Error(), "no fuzz target") {
		t.Errorf("checkFuzzLines(no fuzz rule) = %v, want an error", errs)
	}
}

// TestFuzzScriptRefusesMissingTarget runs scripts/fuzz.sh with a stub go
// that lists no target, then the target: it fails without fuzzing, then
// fuzzes exactly that target for FUZZTIME.
func TestFuzzScriptRefusesMissingTarget(t *testing.T) {
	dir := t.TempDir()
	calls := filepath.Join(dir, "calls")
	stub := filepath.Join(dir, "go")
	os.WriteFile(stub, []byte("#!/bin/sh\necho \"$*\" >>"+calls+"\n[ \"$2\" = -list ] && [ -n \"$LIST\" ] && echo \"$LIST\"\necho 'ok  \tpkg\t0.01s'\n"), 0o755)
	fuzz := func(list string) (string, error) {
		os.Remove(calls)
		cmd := exec.Command("sh", "fuzz.sh", "./devices/", "FuzzParseBuild")
		cmd.Env = append(os.Environ(), "GO="+stub, "FUZZTIME=2s", "LIST="+list)
		out, err := cmd.CombinedOutput()
		b, _ := os.ReadFile(calls)
		return string(out) + "|" + string(b), err
	}
	out, err := fuzz("")
	if err == nil || !strings.Contains(out, "./devices/ has no fuzz target FuzzParseBuild") || strings.Contains(out, "-fuzz ") {
		t.Errorf("fuzz.sh with the target missing: %v, %q; want a failure naming it and no fuzzing", err, out)
	}
	out, err = fuzz("FuzzParseBuildMore\nFuzzParseBuild")
	if want := "test -run ^$ -fuzz ^FuzzParseBuild$ -fuzztime 2s ./devices/\n"; err != nil || !strings.HasSuffix(out, want) {
		t.Errorf("fuzz.sh with the target there: %v, %q; want it to run go %q", err, out, want)
	}
}

// checkFuzzLines checks the recipe of mk's fuzz rule against the Go tree at
// root (see TestMakefileFuzzTargetsExist) and returns every problem.
func checkFuzzLines(mk []byte, root string) []error {
	have, err := fuzzTargets(root)
	if err != nil {
		return []error{err}
	}
	var errs []error
	listed := map[string]bool{}
	in, found := false, false
	sc := bufio.NewScanner(bytes.NewReader(mk))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if !strings.HasPrefix(line, "\t") {
			in = strings.HasPrefix(line, "fuzz:")
			found = found || in
			continue
		}
		if !in {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 3 || f[0] != "$(FUZZ)" {
			errs = append(errs, fmt.Errorf("Makefile:%d: a fuzz line is $(FUZZ) PKG TARGET (scripts/fuzz.sh, which fails when PKG has no TARGET), not %q", n, strings.TrimSpace(line)))
			continue
		}
		pkg, target := "./"+strings.Trim(filepath.Clean(f[1]), "/")+"/", f[2]
		listed[pkg+" "+target] = true
		if slices.Contains(have[target], pkg) {
			continue
		}
		if len(have[target]) > 0 {
			errs = append(errs, fmt.Errorf("Makefile:%d: %s has no fuzz target %s (it is in %s)", n, pkg, target, strings.Join(have[target], ", ")))
		} else {
			errs = append(errs, fmt.Errorf("Makefile:%d: %s has no fuzz target %s", n, pkg, target))
		}
	}
	if !found {
		return []error{fmt.Errorf("Makefile: no fuzz target (a rule fuzz:)")}
	}
	var missing []string
	for target, pkgs := range have {
		for _, pkg := range pkgs {
			if !listed[pkg+" "+target] {
				missing = append(missing, pkg+" "+target)
			}
		}
	}
	slices.Sort(missing)
	for _, m := range missing {
		errs = append(errs, fmt.Errorf("Makefile: fuzz has no line for %s: add $(FUZZ) %s", m, m))
	}
	return errs
}

// fuzzTargets returns the tree's fuzz targets (functions FuzzXxx taking a
// *testing.F in a _test.go file), each with the packages that have one of
// that name, as ./dir/.
func fuzzTargets(root string) (map[string][]string, error) {
	have := map[string][]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		pkg := "./" + filepath.ToSlash(rel) + "/"
		for _, decl := range f.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Fuzz") && takesF(fn) && !slices.Contains(have[fn.Name.Name], pkg) {
				have[fn.Name.Name] = append(have[fn.Name.Name], pkg)
			}
		}
		return nil
	})
	return have, err
}

// takesF reports whether fn's one parameter is a *testing.F.
func takesF(fn *ast.FuncDecl) bool {
	p := fn.Type.Params.List
	if len(p) != 1 || len(p[0].Names) > 1 {
		return false
	}
	star, ok := p[0].Type.(*ast.StarExpr)
	if !ok {
		return false
	}
	sel, ok := star.X.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	x, ok := sel.X.(*ast.Ident)
	return ok && x.Name == "testing" && sel.Sel.Name == "F"
}
