package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The command line parses flags and calls the library: cmd/atmlab's own
// code stays small, each function within a screen, and no file is
// written from here (the library's packages own their files' formats).
const (
	// maxCmdLines is its non-test Go, all build tags: the flags, the
	// command tree and one library call a verb; under 1,200.
	maxCmdLines    = 1199
	maxCmdFuncLine = 60
)

func TestCommandLineOnlyParsesFlags(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	lines := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		lines += fset.File(f.Pos()).LineCount()
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.FuncDecl:
				from, to := fset.Position(n.Pos()), fset.Position(n.End())
				if l := to.Line - from.Line + 1; l > maxCmdFuncLine {
					t.Errorf("%s: %s is %d lines: keep a verb's function under %d (its work belongs in the library)", from, n.Name.Name, l, maxCmdFuncLine)
				}
			case *ast.SelectorExpr:
				if x, ok := n.X.(*ast.Ident); ok && x.Name == "os" && slices.Contains([]string{"WriteFile", "Create", "CreateTemp", "OpenFile"}, n.Sel.Name) {
					t.Errorf("%s: os.%s: cmd/atmlab writes no file; the package that owns the file's format does", fset.Position(n.Pos()), n.Sel.Name)
				}
			}
			return true
		})
	}
	if lines > maxCmdLines {
		t.Errorf("cmd/atmlab has %d lines of non-test Go, over %d: move a verb's work into the library", lines, maxCmdLines)
	}
}
