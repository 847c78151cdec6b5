package labtest_test

import (
	"io/fs"
	"os"
	"strings"
	"testing"

	"github.com/atmlab/atmlab/internal/labtest"
	"github.com/atmlab/atmlab/topologies/labfile"
)

// bases lists the shared labs, from the files themselves.
func bases(t *testing.T) []string {
	t.Helper()
	names, err := fs.Glob(os.DirFS("testdata"), "*.yaml")
	if err != nil || len(names) == 0 {
		t.Fatalf("testdata/*.yaml: %v %v", names, err)
	}
	for i, n := range names {
		names[i] = strings.TrimSuffix(n, ".yaml")
	}
	return names
}

// Every shared lab resolves, named after its file, and the package's doc
// comment names it (so a reader finds the list in one place).
func TestSharedLabsResolve(t *testing.T) {
	doc, err := os.ReadFile("labtest.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, base := range bases(t) {
		text, err := os.ReadFile("testdata/" + base + ".yaml")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(text), "\nname: "+base+"\n") {
			t.Errorf("testdata/%s.yaml: its name is not %s", base, base)
		}
		if _, err := labfile.Parse(base+".yaml", []byte(labtest.Lab(base, "x"))); err != nil {
			t.Errorf("shared lab %s: %v", base, err)
		}
		if !strings.Contains(string(doc), " "+base) {
			t.Errorf("labtest.go's doc comment does not list the shared lab %s", base)
		}
	}
}

// Lab renames the lab and appends its sections; Set changes a value deep in
// the topology and adds a missing key, and the result still resolves with
// the change in it.
func TestLabNameSectionsAndSet(t *testing.T) {
	lab := labtest.Lab("two-hosts", "far",
		"experiments:\n  - {name: s, from: h1, to: h2, tests: [UDP_STREAM], sizes: [1460]}",
		"variants:\n  - {name: slow, set: [{link: \"h1:eth0\", rate: 10M}]}\n")
	lab = labtest.Set(lab, "topology.links[0].impair", "{delay: 10ms}", "seed", "7")
	l, err := labfile.Parse("far.yaml", []byte(lab))
	if err != nil {
		t.Fatalf("Parse(%s): %v", lab, err)
	}
	if l.Name != "far" || l.Seed != 7 || len(l.Experiments) != 1 || len(l.Variants) != 1 {
		t.Errorf("lab = name %q, seed %d, %d experiments, %d variants; want far, 7, 1, 1:\n%s", l.Name, l.Seed, len(l.Experiments), len(l.Variants), lab)
	}
	if !strings.Contains(lab, "impair: {delay: 10ms}") || !strings.Contains(lab, `"h1:eth0"`) {
		t.Errorf("Set lost the flow style or the quoting:\n%s", lab)
	}
}

// A path that does not fit the lab panics, naming the key.
func TestSetRefusesAMissingPath(t *testing.T) {
	for _, path := range []string{"topology.links[5].impair", "topology.nodes.h9.mtu", "topology..x"} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(r.(string), path) {
					t.Errorf("Set(%q) recovered %v, want a panic naming the path", path, r)
				}
			}()
			labtest.Set(labtest.Lab("two-hosts", "x"), path, "1")
		}()
	}
}
