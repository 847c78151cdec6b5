package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// validate names a variant whose name would not make a file name, and a
// variant that makes a bad lab, each at its line.
func TestValidateVariantProblems(t *testing.T) {
	file := filepath.Join(t.TempDir(), "v.yaml")
	os.WriteFile(file, []byte("name: x\ntopology:\n  nodes:\n    h1: {kind: host, ipv4: 10.0.0.1/24}\n    h2: {kind: host, ipv4: 10.0.0.2/24}\n    sw1: {kind: switch}\n  links:\n    - endpoints: [\"h1:eth0\", \"sw1:p1\"]\n    - endpoints: [\"h2:eth0\", \"sw1:p2\"]\n"+
		"variants:\n  - {name: \"<img src=x onerror=alert(1)>\", set: [{link: \"h1:eth0\", rate: 10M}]}\n"), 0o644)
	_, errOut, err := run(t, "validate", file)
	if want := file + `:11: variants[0].name: "<img src=x onerror=alert(1)>": a variant's name names its result files`; err == nil || !strings.Contains(errOut, want) {
		t.Errorf("validate: %v, stderr %q, want %q", err, errOut, want)
	}
	os.WriteFile(file, []byte("name: x\ntopology:\n  nodes:\n    h1: {kind: host, ipv4: 10.0.0.1/24}\n    h2: {kind: host, ipv4: 10.0.0.2/24}\n    sw1: {kind: switch}\n  links:\n    - endpoints: [\"h1:eth0\", \"sw1:p1\"]\n    - endpoints: [\"h2:eth0\", \"sw1:p2\"]\n"+
		"variants:\n  - {name: fine, set: [{link: \"h1:eth0\", rate: 10M}]}\n  - {name: shared, set: [{node: sw1, kind: hub}, {link: \"h1:eth0\", rate: 10M}]}\n"), 0o644)
	_, errOut, err = run(t, "validate", file)
	if want := file + ":9: topology.links: variant shared: hub sw1 runs at one rate"; err == nil || !strings.Contains(errOut, want) || strings.Contains(errOut, "variant fine") {
		t.Errorf("validate: %v, stderr %q, want %q", err, errOut, want)
	}
}
