package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/atmlab/atmlab/internal/labtest"
)

// TestUpAndDownOnAnEngine: up --on and down --on place a split lab (here
// down on Kubernetes, through a stand-in kubectl), refuse an engine they
// do not know, and a lab without parts:.
func TestUpAndDownOnAnEngine(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "split.yaml")
	os.WriteFile(file, []byte(labtest.Lab("split-two-switches", "cmdsplit")), 0o644)
	calls := filepath.Join(dir, "calls")
	os.WriteFile(filepath.Join(dir, "kubectl"), []byte("#!/bin/sh\necho \"$*\" >>"+calls+"\n"), 0o755)
	t.Setenv("PATH", dir+":"+os.Getenv("PATH"))
	out, _, err := run(t, "down", file, "--on", "kubernetes")
	if err != nil || !strings.Contains(out, "split lab cmdsplit: nothing to remove on kubernetes") {
		t.Errorf("down --on kubernetes: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(calls); !strings.Contains(string(b), "delete statefulset,service,configmap -l atmlab/split=atmlab-cmdsplit-split") {
		t.Errorf("kubectl ran %s", b)
	}
	if _, _, err := run(t, "up", file, "--on", "mars"); err == nil || !strings.Contains(err.Error(), "use local, slurm or kubernetes") {
		t.Errorf("up --on mars: %v", err)
	}
	whole := filepath.Join(dir, "whole.yaml")
	os.WriteFile(whole, []byte(labtest.Lab("two-hosts-switch", "cmdwhole")), 0o644)
	if _, _, err := run(t, "down", whole, "--on", "slurm"); err == nil || !strings.Contains(err.Error(), "no parts:") {
		t.Errorf("down --on slurm of a lab without parts: %v", err)
	}
}
