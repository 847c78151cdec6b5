package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/atmlab/atmlab/harness/labrun"
	"github.com/atmlab/atmlab/harness/results"
	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/labfile"
)

// hostileFolder is a results folder that renders, and a file outside it
// that links in it point to.
func hostileFolder(t *testing.T) (dir, target, body string) {
	t.Helper()
	id := labrun.Identity{Lab: "m", SHA256: "aa", Version: "v1", Clock: "virtual"}
	dir = shardDir(t, t.TempDir(), "r", id, pt("delay=0s", 512))
	target = filepath.Join(t.TempDir(), "root-only")
	body = "root:$y$secret:20000:0:99999:7:::\n"
	if err := os.WriteFile(target, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir, target, body
}

func TestReportReplacesLinkedOutputsNotTheirTarget(t *testing.T) {
	dir, target, body := hostileFolder(t)
	for _, n := range []string{"report.md", "report.html", "throughput.svg", "throughput.png"} {
		if err := os.Symlink(target, filepath.Join(dir, n)); err != nil {
			t.Fatal(err)
		}
	}
	if err := Write(t.Context(), dir); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(target); string(b) != body {
		t.Fatalf("the link's target now holds %.40q", b)
	}
	for _, n := range []string{"report.md", "report.html"} {
		if st, err := os.Lstat(filepath.Join(dir, n)); err != nil || !st.Mode().IsRegular() {
			t.Fatalf("%s: %v %v, want the report itself", n, st.Mode(), err)
		}
	}
}

func TestReportRefusesLinkedInputs(t *testing.T) {
	for _, name := range []string{topologies.SpecFile, labrun.RecordsFile, labrun.IdentityFile, labrun.FiguresFile} {
		t.Run(name, func(t *testing.T) {
			dir, target, body := hostileFolder(t)
			os.Remove(filepath.Join(dir, name))
			os.Symlink(target, filepath.Join(dir, name))
			err := Write(t.Context(), dir)
			if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, name)+" is a symbolic link") {
				t.Fatalf("Write() = %v", err)
			}
			if strings.Contains(err.Error(), "'r'") || strings.Contains(err.Error(), body[:4]) {
				t.Fatalf("the error shows the target: %v", err)
			}
		})
	}
}

// spec.json as untrusted input: never panics, an error names the file
// (and the line where there is one).
func FuzzReadLabs(f *testing.F) {
	src, err := os.ReadFile("../../topologies/sw100.yaml")
	if err != nil {
		f.Fatal(err)
	}
	lab, err := labfile.Parse("sw100.yaml", src)
	if err != nil {
		f.Fatal(err)
	}
	spec, err := topologies.SpecJSON([]string{"base"}, []*topologies.Lab{lab})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(spec)
	f.Add([]byte(`{"variants": []}`))
	f.Add([]byte("{\n\"variants\": [{\"name\": \"base\", \"lab\": {}}]}"))
	dir := f.TempDir()
	folder, err := results.Create(dir, results.Force)
	if err != nil {
		f.Fatal(err)
	}
	defer folder.Close()
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := folder.WriteFile(topologies.SpecFile, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := readLabs(folder); err != nil && !strings.HasPrefix(err.Error(), folder.Join(topologies.SpecFile)) {
			t.Fatalf("error without the file: %v", err)
		}
	})
}
