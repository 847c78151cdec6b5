//go:build linux && !atmlab_stub

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/atmlab/atmlab/internal/clihelp"
)

// The committed command reference and man pages are what the command tree
// generates now. (Linux only: the stub build's flag defaults differ.)
func TestCommandReferenceAndManPagesAreCurrent(t *testing.T) {
	md, man := t.TempDir(), t.TempDir()
	if err := clihelp.Generate(newRoot(), md, man); err != nil {
		t.Fatal(err)
	}
	for _, d := range [][2]string{{md, "../../docs/cli"}, {man, "../../docs/man"}} {
		want, _ := filepath.Glob(filepath.Join(d[0], "atmlab*"))
		have, _ := filepath.Glob(filepath.Join(d[1], "atmlab*"))
		if len(want) == 0 || len(want) != len(have) {
			t.Errorf("%s holds %d pages, the command tree makes %d: stale, run make docs-cli", d[1], len(have), len(want))
		}
		for _, f := range want {
			got, err := os.ReadFile(filepath.Join(d[1], filepath.Base(f)))
			gen, _ := os.ReadFile(f)
			if err != nil || !bytes.Equal(got, gen) {
				t.Errorf("%s/%s is stale: run make docs-cli", d[1], filepath.Base(f))
			}
		}
	}
}
