package doccheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// decoderKeys reads the keys the lab file's decoder accepts from its
// source (package topologies and the packages under it: the decoder, the
// kinds' table, the study): every allowed key of a mapping (its field
// tables), each kind's keys (the kinds table), the keys a sweep steps
// through, and the kinds' names. Reading the source, not decoding
// examples, finds a key no example uses.
func decoderKeys(t *testing.T, dir string) (keys, kinds map[string]string) {
	t.Helper()
	fset := token.NewFileSet()
	// The lab file's rooms: topologies and every package under it.
	var dirs []string
	err := filepath.WalkDir(dir, func(path string, e os.DirEntry, err error) error {
		if err == nil && e.IsDir() && e.Name() == "testdata" {
			return filepath.SkipDir
		}
		if err == nil && e.IsDir() {
			dirs = append(dirs, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	pkgs := map[string]*ast.Package{}
	for _, d := range dirs {
		ps, err := parser.ParseDir(fset, d, func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
		if err != nil {
			t.Fatal(err)
		}
		for name, p := range ps {
			pkgs[d+":"+name] = p
		}
	}
	keys, kinds = map[string]string{}, map[string]string{}
	add := func(into map[string]string, e ast.Expr) {
		if lit, ok := e.(*ast.BasicLit); ok && lit.Kind == token.STRING {
			s, _ := strconv.Unquote(lit.Value)
			into[s] = fset.Position(lit.Pos()).String()
		}
	}
	isField := func(e ast.Expr) bool {
		switch e := e.(type) {
		case *ast.Ident:
			return e.Name == "field"
		case *ast.SelectorExpr:
			return e.Sel.Name == "Field" // labyaml.Field
		}
		return false
	}
	firstOf := func(e ast.Expr) {
		if c, ok := e.(*ast.CompositeLit); ok && len(c.Elts) > 0 {
			first := c.Elts[0]
			if kv, ok := first.(*ast.KeyValueExpr); ok {
				if id, ok := kv.Key.(*ast.Ident); !ok || id.Name != "Name" {
					return
				}
				first = kv.Value
			}
			add(keys, first)
		}
	}
	strings := func(e ast.Expr, into map[string]string) {
		if c, ok := e.(*ast.CompositeLit); ok {
			for _, x := range c.Elts {
				add(into, x)
			}
		}
	}
	for _, pkg := range pkgs {
		for _, f := range pkg.Files {
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.CompositeLit:
					switch typ := n.Type.(type) {
					case *ast.Ident, *ast.SelectorExpr:
						if isField(typ) {
							firstOf(n)
						}
					case *ast.ArrayType:
						if isField(typ.Elt) {
							for _, e := range n.Elts {
								firstOf(e)
							}
						}
					case *ast.MapType:
						if isField(typ.Value) {
							for _, e := range n.Elts {
								if kv, ok := e.(*ast.KeyValueExpr); ok {
									firstOf(kv.Value)
								}
							}
						}
					}
				case *ast.KeyValueExpr:
					if id, ok := n.Key.(*ast.Ident); ok && (id.Name == "keys" || id.Name == "Keys") {
						strings(n.Value, keys)
					}
				case *ast.ValueSpec:
					for i, name := range n.Names {
						switch {
						case name.Name == "sweepKeys" && i < len(n.Values):
							strings(n.Values[i], keys)
						case len(name.Name) > 4 && name.Name[:4] == "Kind" && i < len(n.Values):
							add(kinds, n.Values[i])
						}
					}
				}
				return true
			})
		}
	}
	return keys, kinds
}

// TestLabFileReferenceNamesEveryKey checks that docs/lab-file.md lists
// every key the decoder accepts, each in the first column of a table row
// (as `key`, or as the last part of a dotted path such as
// `interfaces.NAME.ipv4`), and every node kind.
func TestLabFileReferenceNamesEveryKey(t *testing.T) {
	r := root(t)
	keys, kinds := decoderKeys(t, filepath.Join(r, "topologies"))
	if len(keys) < 80 || len(kinds) < 6 {
		t.Fatalf("read %d keys and %d kinds from topologies/: has the decoder's table shape changed? %v %v", len(keys), len(kinds), keys, kinds)
	}
	data, err := os.ReadFile(filepath.Join(r, "docs", "lab-file.md"))
	if err != nil {
		t.Fatal(err)
	}
	var firstCells []string
	for _, l := range strings.Split(string(data), "\n") {
		if cells := strings.Split(l, "|"); strings.HasPrefix(l, "|") && len(cells) > 2 {
			firstCells = append(firstCells, cells[1])
		}
	}
	first := strings.Join(firstCells, "\n")
	var missing []string
	for k, at := range keys {
		if !regexp.MustCompile("`([A-Za-z_]+(\\[\\])?\\.)*" + regexp.QuoteMeta(k) + "`").MatchString(first) {
			missing = append(missing, k+" ("+at+")")
		}
	}
	for k, at := range kinds {
		if !strings.Contains(first, "`"+k+"`") {
			missing = append(missing, "kind "+k+" ("+at+")")
		}
	}
	sort.Strings(missing)
	for _, m := range missing {
		t.Errorf("docs/lab-file.md has no table row for %s: add it with its range", m)
	}
}
