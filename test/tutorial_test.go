//go:build integration

package test

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/atmlab/atmlab/harness/perf"
	"github.com/atmlab/atmlab/internal/doccheck"
)

// TestTutorialRunsAsWritten runs the tutorial's shell lines in order, as a
// reader would, against real labs: validate, up (until it says ready), the
// pings, iperf3 and atmlab perf through the hub, the router and the ATM
// switch, set and its reset, Ctrl-C, and lab run with its report. Each line
// must succeed. The clone, build and root-shell lines are the setup this
// test has already done; the lab is renamed and its files copied so that
// it cannot meet a reader's own lab.
func TestTutorialRunsAsWritten(t *testing.T) {
	requireRoot(t, "iperf3", "ping", "traceroute")
	page, err := os.ReadFile("../docs/tutorial.md")
	if err != nil {
		t.Fatal(err)
	}
	name := labName()
	dir := t.TempDir()
	files, _ := filepath.Glob("../docs/tutorial/*.yaml")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		data = bytes.ReplaceAll(data, []byte("name: first\n"), []byte("name: "+name+"\n"))
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rewrite := strings.NewReplacer("docs/tutorial/", dir+"/", "results/first", dir+"/results", " first ", " "+name+" ")
	env := append(os.Environ(), "PATH="+filepath.Dir(atmlab)+":"+os.Getenv("PATH"))

	var upCmd *exec.Cmd
	stopUp := func() {
		if upCmd == nil {
			return
		}
		upCmd.Process.Signal(syscall.SIGINT) // Ctrl-C
		done := make(chan error, 1)
		go func() { done <- upCmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("atmlab up after Ctrl-C: %v", err)
			}
		case <-time.After(30 * time.Second):
			upCmd.Process.Kill()
			t.Errorf("atmlab up did not stop within 30 s of Ctrl-C")
		}
		upCmd = nil
	}
	t.Cleanup(func() {
		stopUp()
		exec.Command(atmlab, "down", name).Run()
	})

	start := time.Now()
	ran := 0
	for _, b := range doccheck.Parse(page).Blocks {
		if b.Lang != "sh" {
			continue
		}
		for i, line := range b.Lines {
			line = strings.TrimSpace(line)
			if line == "" || setupLine(line) {
				continue
			}
			at := b.Line + i
			cmdline := rewrite.Replace(line)
			words := doccheck.Words(cmdline)
			if len(words) >= 2 && words[0] == "atmlab" && words[1] == "up" {
				upCmd = startTutorialUp(t, at, cmdline, env)
				continue
			}
			if len(words) >= 3 && words[0] == "atmlab" && words[1] == "lab" && words[2] == "run" {
				stopUp() // the reader pressed Ctrl-C in the first shell
			}
			t0 := time.Now()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			c := exec.CommandContext(ctx, "bash", "-c", cmdline)
			c.Env = env
			c.Dir = ".."
			var out []byte
			if strings.HasSuffix(line, "&") {
				// In the background: its output to /dev/null, so that bash
				// returns at once; it lives until the lab is removed.
				err = c.Run()
				if err == nil {
					tutorialServerListening(t, at, words)
				}
			} else {
				out, err = c.CombinedOutput()
			}
			cancel()
			t.Logf("docs/tutorial.md:%d (%.1f s): %s\n%s", at, time.Since(t0).Seconds(), line, out)
			if err != nil {
				t.Fatalf("docs/tutorial.md:%d: %s: %v", at, line, err)
			}
			ran++
		}
	}
	stopUp()
	if ran < 10 {
		t.Fatalf("ran %d lines of the tutorial: has its shape changed?", ran)
	}
	for _, f := range []string{"report.html", "report.md", "results.jsonl", "spec.json"} {
		if _, err := os.Stat(filepath.Join(dir, "results", f)); err != nil {
			t.Errorf("lab run wrote no %s: %v", f, err)
		}
	}
	t.Logf("the tutorial's %d lines ran in %.0f s", ran, time.Since(start).Seconds())
}

// setupLine reports whether a tutorial line is setup this test has done
// already: cloning, building, the root shell and its PATH.
func setupLine(line string) bool {
	for _, p := range []string{"git clone", "cd ", "sudo make", "make ", "sudo -s", "export "} {
		if strings.HasPrefix(line, p) {
			return true
		}
	}
	return false
}

// startTutorialUp starts `atmlab up` as the tutorial's first shell does and waits
// until it says the lab is ready.
func startTutorialUp(t *testing.T, at int, line string, env []string) *exec.Cmd {
	t.Helper()
	c := exec.Command("bash", "-c", "exec "+line)
	c.Env = env
	c.Dir = ".."
	out, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	c.Stderr = c.Stdout
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		var seen []string
		for sc.Scan() {
			seen = append(seen, sc.Text())
			if strings.Contains(sc.Text(), "ready") {
				ready <- strings.Join(seen, "\n")
				break
			}
		}
		for sc.Scan() {
		}
		close(ready)
	}()
	select {
	case s, ok := <-ready:
		if !ok {
			t.Fatalf("docs/tutorial.md:%d: %s ended without saying ready", at, line)
		}
		t.Logf("docs/tutorial.md:%d: %s\n%s", at, line, s)
	case <-time.After(60 * time.Second):
		c.Process.Kill()
		t.Fatalf("docs/tutorial.md:%d: %s: not ready within 60 s", at, line)
	}
	return c
}

// tutorialServerListening waits until the server a tutorial line started
// in the background (atmlab exec LAB NODE -- atmlab perf server &)
// listens, so that the next line's client finds it.
func tutorialServerListening(t *testing.T, at int, words []string) {
	t.Helper()
	if len(words) < 8 || words[0] != "atmlab" || words[1] != "exec" || words[4] != "--" || words[5] != "atmlab" || words[6] != "perf" || words[7] != "server" {
		t.Fatalf("docs/tutorial.md:%d: a background line this test cannot wait for: %q (it knows atmlab exec LAB NODE -- atmlab perf server &)", at, strings.Join(words, " "))
	}
	(&running{t: t, name: words[2]}).waitListening(words[3], "tcp", perf.DefaultPort)
}
