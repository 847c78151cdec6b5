package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// flentBin is Debian's flent, which make deps and CI install.
const flentBin = "/usr/bin/flent"

// A virtual lab run leaves flent's data files in its folder's flent/, and
// flent itself (in batch mode, no display) opens them and plots them: a
// stream's throughput and a request/response test's latency over time,
// each a PNG. report --flent writes them again for a folder that lacks
// them.
func TestFlentPlotsALabRun(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f.yaml")
	lab := virtualLab[:strings.Index(virtualLab, "experiments:")] +
		"experiments:\n  - {name: streams, from: h1, to: h2, tests: [TCP_STREAM, TCP_RR], sizes: [1472], duration: 500ms, interval: 100ms}\n"
	os.WriteFile(file, []byte(lab), 0o644)
	out := filepath.Join(dir, "out")
	stdout, errOut, err := run(t, "lab", "run", "--clock", "virtual", "--out", out, file)
	if err != nil {
		t.Fatalf("lab run: %v\n%s", err, errOut)
	}
	if !strings.Contains(stdout, "flent: 2 files in "+filepath.Join(out, "flent")) {
		t.Errorf("lab run says %q, want where its 2 flent files are", stdout)
	}
	stream := filepath.Join(out, "flent", "base-streams-TCP_STREAM-1472-default-r1-virtual.flent.gz")
	rr := filepath.Join(out, "flent", "base-streams-TCP_RR-1472-default-r1-virtual.flent.gz")
	os.Remove(rr)
	if stdout, _, err := run(t, "report", out, "--flent"); err != nil || !strings.Contains(stdout, "flent: 2 files") {
		t.Fatalf("report --flent: %v %q", err, stdout)
	}
	if _, err := os.Stat(rr); err != nil {
		t.Fatalf("report --flent did not write the missing file again: %v", err)
	}

	if _, err := os.Stat(flentBin); err != nil {
		t.Skipf("%s is not installed (apt-get install flent; make deps does): the files are written but not plotted", flentBin)
	}
	for _, c := range []struct{ file, plot string }{{stream, "totals"}, {rr, "ping"}} {
		png := filepath.Join(dir, c.plot+".png")
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		cmd := exec.CommandContext(ctx, flentBin, "-i", c.file, "-p", c.plot, "-o", png)
		cmd.Env = append(os.Environ(), "MPLBACKEND=Agg", "HOME="+dir) // no display, no user's rc
		msg, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			t.Fatalf("flent -p %s on %s: %v\n%s", c.plot, filepath.Base(c.file), err, msg)
		}
		if strings.Contains(string(msg), "ERROR") {
			t.Errorf("flent -p %s: %s", c.plot, msg)
		}
		b, err := os.ReadFile(png)
		if err != nil || len(b) < 1000 || !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) {
			t.Errorf("flent -p %s wrote %d bytes (%v), want a PNG", c.plot, len(b), err)
		}
	}
}
