package crosscheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// targets are the systems besides Linux that the command builds for: on
// them every verb that needs no kernel works and the others say they need
// Linux (the atmlab_stub tests run those verbs).
var targets = []struct{ goos, goarch string }{{"darwin", "arm64"}, {"windows", "amd64"}}

// TestCommandTypeChecksOnMacOSAndWindows type-checks cmd/atmlab and every
// package it imports, standard library included, from source, with the
// files each target's build selects (cgo off, as in a cross-build).
func TestCommandTypeChecksOnMacOSAndWindows(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks the whole import graph twice")
	}
	for _, tg := range targets {
		t.Run(tg.goos, func(t *testing.T) {
			for _, err := range typeCheck(t, filepath.Join("..", "..", "cmd", "atmlab"), tg.goos, tg.goarch) {
				t.Errorf("%s/%s: %v", tg.goos, tg.goarch, err)
			}
		})
	}
}

// TestTypeCheckRefusesALinuxOnlyCall: a file without a build constraint
// that calls epoll type-checks for Linux and not for macOS.
func TestTypeCheckRefusesALinuxOnlyCall(t *testing.T) {
	refusesOnMacOS(t, filepath.Join("testdata", "linuxonly"))
}

// TestTypeCheckRefusesALinuxOnlyCallInAnImportedBody: the module's own
// packages are checked whole, so an epoll call inside a function body of
// a package the command imports fails for macOS as a cross-build does,
// though that package's API is the same on every system.
func TestTypeCheckRefusesALinuxOnlyCallInAnImportedBody(t *testing.T) {
	refusesOnMacOS(t, filepath.Join("testdata", "linuxbody"))
}

// refusesOnMacOS type-checks the command in dir for Linux, where it must
// pass, and for macOS, where it must not.
func refusesOnMacOS(t *testing.T, dir string) {
	t.Helper()
	if errs := typeCheck(t, dir, "linux", "amd64"); len(errs) > 0 {
		t.Fatalf("linux/amd64: %v", errs)
	}
	if errs := typeCheck(t, dir, "darwin", "arm64"); len(errs) == 0 {
		t.Fatal("darwin/arm64: epoll type-checked")
	} else {
		t.Logf("darwin/arm64: %v", errs[0])
	}
}

// listed is what `go list -json` says of one package.
type listed struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	Imports    []string
	ImportMap  map[string]string
	Standard   bool
	Module     *struct{ Main bool }
	Error      *struct{ Err string }

	types *types.Package
	done  chan struct{}
}

// typeCheck type-checks the package in dir and everything it imports as a
// build for goos/goarch would, and returns the errors. One `go list -deps`
// selects every package's files for the target (a go/build lookup per
// import runs `go list` once per package, which is where the time went);
// packages are then parsed and checked here, each once its imports are,
// side by side. The module's own packages are checked whole; the standard
// library's and the dependencies' function bodies are skipped, as the
// source importer does: only their APIs matter to ours.
func typeCheck(t *testing.T, dir, goos, goarch string) []error {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-e", "-json=ImportPath,Dir,GoFiles,Imports,ImportMap,Standard,Module,Error", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH="+goarch, "CGO_ENABLED=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list in %s for %s/%s: %v\n%s", dir, goos, goarch, err, stderr.Bytes())
	}
	var pkgs []*listed
	byPath := map[string]*listed{}
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		p := &listed{done: make(chan struct{})}
		if err := dec.Decode(p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("go list in %s: %v", dir, err)
		}
		pkgs = append(pkgs, p)
		byPath[p.ImportPath] = p
	}
	if len(pkgs) == 0 || len(pkgs[len(pkgs)-1].GoFiles) == 0 {
		t.Fatalf("%s/%s: no file of %s selected", goos, goarch, dir)
	}

	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
		cpus = make(chan struct{}, runtime.GOMAXPROCS(0))
	)
	fail := func(err error) { mu.Lock(); errs = append(errs, err); mu.Unlock() }
	fset := token.NewFileSet()
	sizes := types.SizesFor("gc", goarch)
	for _, p := range pkgs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(p.done)
			if p.ImportPath == "unsafe" {
				p.types = types.Unsafe
				return
			}
			if p.Error != nil {
				fail(fmt.Errorf("%s: %s", p.ImportPath, p.Error.Err))
				return
			}
			own := p.Module != nil && p.Module.Main
			imp := importerFunc(func(path string) (*types.Package, error) {
				if mapped, ok := p.ImportMap[path]; ok {
					path = mapped
				}
				dep := byPath[path]
				if dep == nil {
					return nil, fmt.Errorf("%s imports %s, which go list did not list", p.ImportPath, path)
				}
				<-dep.done
				if dep.types == nil {
					return nil, fmt.Errorf("%s does not type-check", path)
				}
				return dep.types, nil
			})
			// Wait for the imports before taking a core, so that a
			// waiting package holds none.
			for _, path := range p.Imports {
				if dep := byPath[path]; dep != nil {
					<-dep.done
				}
			}
			cpus <- struct{}{}
			defer func() { <-cpus }()
			var files []*ast.File
			for _, name := range p.GoFiles {
				f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
				if err != nil {
					fail(err)
					return
				}
				files = append(files, f)
			}
			var first error
			conf := types.Config{Importer: imp, Sizes: sizes, IgnoreFuncBodies: !own,
				Error: func(err error) {
					if first == nil {
						first = err
					}
					if own {
						fail(err)
					}
				}}
			pkg, _ := conf.Check(p.ImportPath, fset, files, nil)
			if first != nil && !own {
				fail(fmt.Errorf("%s: %v", p.ImportPath, first))
			}
			if first == nil {
				p.types = pkg
			}
		}()
	}
	wg.Wait()
	return errs
}

// importerFunc is a types.Importer.
type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }
