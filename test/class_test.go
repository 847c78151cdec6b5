//go:build integration

package test

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/atmlab/atmlab/harness/labrun"
)

// One server holds a class: two students run the same lesson (the hub
// lesson, rootless, in real time) at the same moment and both runs
// measure every point; then each brings the lesson's lab up under the same
// name, side by side, and neither sees nor reaches the other's: `ls`
// lists only one's own, and stats, set, exec and down of the name reach
// one's own lab, never the other's.
func TestClassOfTwoOnOneServer(t *testing.T) {
	a := newRootlessUID(t, 0o666, rootlessUID+10)
	b := newRootlessUID(t, 0o666, rootlessUID+11)
	src, err := os.ReadFile(filepath.Join("..", "lessons", "01-hub-vs-switch", "lab.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	const name = "hubsw" // the lesson's own name, the same for both
	if len(namespaces(name)) > 0 {
		t.Skipf("a lab %s is running as root", name)
	}
	for _, u := range []*rootless{a, b} {
		if err := os.WriteFile(filepath.Join(u.dir, "lab.yaml"), src, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// Both students run the lesson at once.
	var wg sync.WaitGroup
	outs := make([][]byte, 2)
	errs := make([]error, 2)
	start := time.Now()
	for i, u := range []*rootless{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i], errs[i] = u.building("lab", "run", "lab.yaml", "--out", "out").CombinedOutput()
		}()
	}
	wg.Wait()
	t.Logf("two students' lesson runs at once took %v", time.Since(start).Round(time.Second))
	for i, u := range []*rootless{a, b} {
		if errs[i] != nil {
			t.Fatalf("uid %d's lab run: %v\n%s", u.uid, errs[i], outs[i])
		}
		recs, err := labrun.ReadRecords(filepath.Join(u.dir, "out"))
		if err != nil || len(recs) != 4 {
			t.Fatalf("uid %d's lab run: %d records (%v), want the lesson's 4", u.uid, len(recs), err)
		}
		for _, r := range recs {
			if r.Error != "" {
				t.Errorf("uid %d: %s %s: %s", u.uid, r.Variant, r.Experiment, r.Error)
			}
		}
		checkGone(t, u, name, "after the class's lab runs")
	}

	// Both bring up the lab of the same name at once.
	cmdA, _, doneA := a.up("lab.yaml")
	defer cmdA.Process.Kill()
	cmdB, _, doneB := b.up("lab.yaml")
	defer cmdB.Process.Kill()
	if ns := namespaces(name); len(ns) > 0 {
		t.Errorf("the students' labs are in root's namespaces: %v", ns)
	}
	for _, u := range []*rootless{a, b} {
		ls := u.run("ls")
		if n := strings.Count(ls, name); n != 1 {
			t.Errorf("uid %d's ls lists %s %d times, want its own once:\n%s", u.uid, name, n, ls)
		}
	}
	// B takes its own lab down: A's keeps running and carries traffic.
	if down := b.run("down", name); !strings.Contains(down, "removed") {
		t.Errorf("B's down: %s", down)
	}
	waitExit(t, doneB, "B's up after B's down")
	checkGone(t, b, name, "after B's down")
	if ping := a.run("exec", name, "h1", "--", "ping", "-c", "2", "-i", "0.2", "-W", "1", "10.0.0.3"); !strings.Contains(ping, "2 received") {
		t.Errorf("A's lab after B's down:\n%s", ping)
	}
	// With only A's lab running, B finds no lab of that name (down has
	// nothing to remove).
	for _, args := range [][]string{{"stats", name}, {"set", name, "hub1", "buffer=64KiB"}, {"exec", name, "h1", "--", "true"}, {"down", name}} {
		out, err := b.command(append([]string{atmlab}, args...)...).CombinedOutput()
		if !strings.Contains(string(out), "is not running") && !strings.Contains(string(out), "not found") && !strings.Contains(string(out), "nothing to remove") {
			t.Errorf("B's atmlab %s with A's lab up: %v: %s, want that B has no such lab", strings.Join(args, " "), err, out)
		}
	}
	if ls := b.run("ls"); strings.Contains(ls, name) {
		t.Errorf("B's ls lists A's lab:\n%s", ls)
	}
	if ping := a.run("exec", name, "h1", "--", "ping", "-c", "1", "-W", "1", "10.0.0.3"); !strings.Contains(ping, "1 received") {
		t.Errorf("A's lab after B's attempts:\n%s", ping)
	}
	cmdA.Process.Signal(syscall.SIGINT)
	waitExit(t, doneA, "A's up after SIGINT")
	checkGone(t, a, name, "after A's SIGINT")
}

// waitExit waits up to 15 s for an up to end.
func waitExit(t *testing.T, done chan error, what string) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		t.Fatalf("%s: still running after 15 s", what)
	}
}
