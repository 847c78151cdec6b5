//go:build linux && !atmlab_stub

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The verbs that reach the kernel runtime; kernel_other_test.go has what
// they say without it.

// up and lab run print the same warnings on stderr before they build
// anything: here before lab run refuses a file without experiments, and
// before up fails to create its CPU profile (as root; a normal user's up
// would start a holder).
func TestUpAndLabRunWarnOfLoops(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "loop.yaml")
	os.WriteFile(file, []byte("name: x\ntopology:\n  nodes:\n    h1: {kind: host, ipv4: 10.0.0.1/24}\n    sw1: {kind: switch}\n  links:\n    - endpoints: [\"h1:eth0\", \"sw1:p1\"]\n    - endpoints: [\"sw1:p3\", \"sw1:p4\"]\n"), 0o644)
	want := file + ":8: warning: topology.links: loop: link sw1:p3-sw1:p4 joins sw1 to itself"
	out, errOut, err := run(t, "lab", "run", file)
	if err == nil || !strings.Contains(err.Error(), "has no experiments") || !strings.Contains(errOut, want) || strings.Contains(out, "warning") {
		t.Fatalf("lab run: %v\nstdout %q\nstderr %q", err, out, errOut)
	}
	if os.Geteuid() != 0 {
		t.Skip("up as a normal user starts a holder first; the lab run path above is the same code")
	}
	out, errOut, err = run(t, "up", "--cpuprofile", filepath.Join(dir, "missing", "cpu.prof"), file)
	if err == nil || !strings.Contains(errOut, want) || strings.Contains(out, "ready") {
		t.Fatalf("up: %v\nstdout %q\nstderr %q", err, out, errOut)
	}
}

func TestNotRunning(t *testing.T) {
	_, _, err := run(t, "stats", "nosuchlab")
	if err == nil || !strings.Contains(err.Error(), "lab nosuchlab is not running") {
		t.Fatalf("stats of a lab that is not up: %v", err)
	}
	out, _, err := run(t, "down", "nosuchlab")
	if err != nil || !strings.Contains(out, "nothing to remove") {
		t.Fatalf("down of a lab that is not up: %v %q", err, out)
	}
	_, _, err = run(t, "exec", "nosuchlab", "h1", "--", "true")
	if err == nil || !strings.Contains(err.Error(), "no host h1 in lab nosuchlab") {
		t.Fatalf("exec in a lab that is not up: %v", err)
	}
}

// Names on the command line are checked before they reach a path:
// down ../../tmp/v once removed /tmp/v.sock.
func TestNamesChecked(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "v.sock")
	os.WriteFile(victim, nil, 0o600)
	name := "../.." + dir + "/v" // /run/atmlab/<name>.sock is the victim
	for _, args := range [][]string{
		{"down", name},
		{"stats", name},
		{"capture", name, "h1:eth0", "-w", filepath.Join(dir, "c.pcap")},
		{"exec", name, "h1", "--", "true"},
	} {
		_, _, err := run(t, args...)
		if err == nil || !strings.Contains(err.Error(), "lab name") {
			t.Errorf("atmlab %s: %v, want a lab name error", args[0], err)
		}
	}
	if _, err := os.Stat(victim); err != nil {
		t.Errorf("down of a path: %v", err)
	}
	_, _, err := run(t, "exec", "lab", "../x", "--", "true")
	if err == nil || !strings.Contains(err.Error(), "node name") {
		t.Errorf("exec with a node path: %v", err)
	}
}

// atmlab web needs a running lab; a live view's address is checked before
// anything is built.
func TestWebRefusals(t *testing.T) {
	_, _, err := run(t, "web", "nosuchlab", "--listen", "127.0.0.1:0")
	if err == nil || !strings.Contains(err.Error(), "lab nosuchlab is not running") {
		t.Fatalf("web of a lab that is not up: %v", err)
	}
	for _, args := range [][]string{
		{"up", "../../topologies/sw100.yaml", "--web", "0.0.0.0:8080"},
		{"lab", "run", "../../topologies/sw100.yaml", "--web", ":8080"},
	} {
		out, _, err := run(t, args...)
		if err == nil || !strings.Contains(err.Error(), "--web-public") || strings.Contains(out, "ready") {
			t.Errorf("atmlab %s: %v, want a refusal naming --web-public, before building", strings.Join(args, " "), err)
		}
	}
}

// A capture that fails leaves an existing -w file as it was (it once
// truncated it first) and no temporary file beside it.
func TestFailedCaptureKeepsFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "old.pcap")
	os.WriteFile(file, []byte("an earlier capture"), 0o640)
	_, _, err := run(t, "capture", "nosuchlab", "h1:eth0", "-w", file)
	if err == nil || !strings.Contains(err.Error(), "nosuchlab") {
		t.Fatalf("capture of a lab that is not up: %v", err)
	}
	if b, _ := os.ReadFile(file); string(b) != "an earlier capture" {
		t.Errorf("after a failed capture the file holds %q", b)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the folder holds %d files after a failed capture, want only the old one", len(entries))
	}
}

// up --part takes its cut flags together and refuses a part the lab does
// not have, naming the ones it has, before it builds anything.
func TestUpPartRefusesIncompleteFlagsAndUnknownPart(t *testing.T) {
	lab := "../../internal/labtest/testdata/split-two-switches.yaml"
	if _, _, err := run(t, "up", lab, "--cut-listen", ":47000"); err == nil || !strings.Contains(err.Error(), "go with --part NAME") {
		t.Errorf("--cut-listen without --part: %v", err)
	}
	if _, _, err := run(t, "up", lab, "--part", "left"); err == nil || !strings.Contains(err.Error(), "needs --cut-listen HOST:PORT and --cut-peer PART=HOST:PORT") {
		t.Errorf("--part without its addresses: %v", err)
	}
	if os.Geteuid() != 0 {
		t.Skip("the rest needs root: a normal user's part is refused")
	}
	_, _, err := run(t, "up", lab, "--part", "middle", "--cut-listen", "127.0.0.1:0", "--cut-peer", "left=127.0.0.1:1")
	if err == nil || !strings.Contains(err.Error(), "--part middle: no such part; the lab's parts are left, right") {
		t.Errorf("an unknown part: %v", err)
	}
}
