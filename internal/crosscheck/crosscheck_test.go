package crosscheck

import (
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// targets are the systems besides Linux that the command builds for: on
// them every verb that needs no kernel works and the others say they need
// Linux (the atmlab_stub tests run those verbs).
var targets = []struct{ goos, goarch string }{{"darwin", "arm64"}, {"windows", "amd64"}}

// TestCommandTypeChecksOnMacOSAndWindows type-checks cmd/atmlab and every
// package it imports, standard library included, from source, with the
// files each target's build selects (cgo off, as in a cross-build). Each
// target is checked in a process of its own, side by side: the source
// importer reads the global build.Default, and one target alone takes a
// core for over a minute.
func TestCommandTypeChecksOnMacOSAndWindows(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks the whole import graph twice")
	}
	if target := os.Getenv(targetEnv); target != "" {
		goos, goarch, _ := strings.Cut(target, "/")
		for _, err := range typeCheck(t, filepath.Join("..", "..", "cmd", "atmlab"), goos, goarch) {
			t.Errorf("%s: %v", target, err)
		}
		return
	}
	for _, tg := range targets {
		t.Run(tg.goos, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command(os.Args[0], "-test.run=^TestCommandTypeChecksOnMacOSAndWindows$", "-test.count=1", "-test.v")
			cmd.Env = append(os.Environ(), targetEnv+"="+tg.goos+"/"+tg.goarch)
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "--- PASS: TestCommandTypeChecksOnMacOSAndWindows") {
				t.Errorf("%s/%s: %v\n%s", tg.goos, tg.goarch, err, out)
			}
		})
	}
}

// targetEnv names the one target a child process of the test checks.
const targetEnv = "ATMLAB_CROSSCHECK_TARGET"

// TestTypeCheckRefusesALinuxOnlyCall: a file without a build constraint
// that calls epoll type-checks for Linux and not for macOS.
func TestTypeCheckRefusesALinuxOnlyCall(t *testing.T) {
	dir := filepath.Join("testdata", "linuxonly")
	if errs := typeCheck(t, dir, "linux", "amd64"); len(errs) > 0 {
		t.Fatalf("linux/amd64: %v", errs)
	}
	if errs := typeCheck(t, dir, "darwin", "arm64"); len(errs) == 0 {
		t.Fatal("darwin/arm64: epoll type-checked")
	}
}

// typeCheck type-checks the package in dir as a build for goos/goarch
// would, and returns its errors (an import that does not type-check is
// one).
func typeCheck(t *testing.T, dir, goos, goarch string) []error {
	t.Helper()
	// The source importer finds packages and selects their files by
	// build.Default.
	saved := build.Default
	defer func() { build.Default = saved }()
	build.Default.GOOS, build.Default.GOARCH, build.Default.CgoEnabled = goos, goarch, false
	dir, _ = filepath.Abs(dir)
	pkg, err := build.Default.ImportDir(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range pkg.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	if len(files) == 0 {
		t.Fatalf("%s/%s: no file of %s selected", goos, goarch, dir)
	}
	var errs []error
	conf := types.Config{Importer: importer.ForCompiler(fset, "source", nil), Sizes: types.SizesFor("gc", goarch),
		Error: func(err error) { errs = append(errs, err) }}
	conf.Check("main", fset, files, nil)
	return errs
}
