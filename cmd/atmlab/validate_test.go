package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/atmlab/atmlab/internal/labtest"
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

// validate lists a split lab's parts and, for every link, whether the lab
// may be cut there and why not, in text and in JSON.
func TestValidateListsWhereALabMayBeCut(t *testing.T) {
	file := labtest.File(t, labtest.Lab("split-two-switches", "s"))
	out, _, err := run(t, "validate", file)
	for _, want := range []string{"  part left: h1, h2, sw1\n", "  link h1:eth0-sw1:p1 (line 14) may not be cut: its one-way delay is 0",
		"  link sw1:p9-sw2:p9 (line 18) may be cut: a point-to-point Ethernet link, one-way delay 1ms (the lookahead); cut here, between left and right\n"} {
		if err != nil || !strings.Contains(out, want) {
			t.Errorf("validate: %v, stdout lacks %q:\n%s", err, want, out)
		}
	}
	out, _, err = run(t, "validate", "-o", "json", file)
	var v struct {
		Parts []struct{ Name string }
		Cuts  []struct {
			Link, Why, Lookahead string
			Cuttable             bool
			Parts                []string
		}
	}
	if err != nil || json.Unmarshal([]byte(out), &v) != nil || len(v.Parts) != 2 || len(v.Cuts) != 5 ||
		v.Cuts[0].Cuttable || !v.Cuts[4].Cuttable || v.Cuts[4].Lookahead != "1ms" || strings.Join(v.Cuts[4].Parts, "-") != "left-right" {
		t.Fatalf("validate -o json: %v %s", err, out)
	}
}
