//go:build !linux || atmlab_stub

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Without Linux (here: the tag atmlab_stub, which builds this package as
// it builds on macOS and Windows) every verb that builds namespaces says
// it needs Linux, names itself and what works instead, and touches
// nothing; the package's other tests (validate, calc, sim, perf, lab run
// --clock virtual, report) run in the same build, but for those that
// drive the runner's library code directly (skipInStubRun).
func TestNeedsLinux(t *testing.T) {
	dir := t.TempDir()
	lab := filepath.Join(dir, "x.yaml")
	os.WriteFile(lab, []byte("name: x\ntopology:\n  nodes:\n    h1: {kind: host, ipv4: 10.0.0.1/24}\n    h2: {kind: host, ipv4: 10.0.0.2/24}\n  links:\n    - endpoints: [\"h1:eth0\", \"h2:eth0\"]\nexperiments:\n  - {name: e, tests: [tcp_rr], sizes: [64]}\n"), 0o644)
	results := filepath.Join(dir, "results")
	for _, tc := range []struct {
		verb string
		args []string
	}{
		{"up", []string{"up", lab}},
		{"down", []string{"down", "x"}},
		{"exec", []string{"exec", "x", "h1", "--", "true"}},
		{"stats", []string{"stats", "x"}},
		{"set", []string{"set", "x", "h1:eth0", "rate=10M"}},
		{"capture", []string{"capture", "x", "h1:eth0", "-w", filepath.Join(dir, "c.pcap")}},
		{"lab run --clock real", []string{"lab", "run", lab, "--out", results}},
		{"lab run --clock both", []string{"lab", "run", lab, "--clock", "both", "--out", results}},
	} {
		out, _, err := run(t, tc.args...)
		want := "atmlab " + tc.verb + " needs Linux (network namespaces and TAPs)"
		if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), "lab run --clock virtual work") || strings.Contains(err.Error(), "\n") || out != "" {
			t.Errorf("atmlab %s: %v (stdout %q), want %q...", strings.Join(tc.args, " "), err, out, want)
		}
	}
	for _, p := range []string{results, filepath.Join(dir, "c.pcap")} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s was made: %v", p, err)
		}
	}
}
