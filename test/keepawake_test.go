//go:build integration

package test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// up --keep-cpus-awake runs one SCHED_IDLE thread pinned to each CPU in a
// child process while the lab carries traffic, and the child is gone once
// the lab stops.
func TestKeepCPUsAwakeRunsAKeeperPerCPUThatEndsWithTheLab(t *testing.T) {
	requireRoot(t, "ping")
	r := up(t, strings.ReplaceAll(pairLab, "RATE", "100M"), "--keep-cpus-awake")
	keeper := keeperOf(t, r, true)
	pinned := map[string]bool{}
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*", keeper))
	for _, task := range tasks {
		stat, _ := os.ReadFile(task + "/stat")
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if f[38] != "5" { // policy: SCHED_IDLE
			continue
		}
		status, _ := os.ReadFile(task + "/status")
		for _, line := range strings.Split(string(status), "\n") {
			if cpus, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
				pinned[strings.TrimSpace(cpus)] = true
			}
		}
	}
	if len(pinned) != runtime.NumCPU() {
		t.Errorf("the keeper has SCHED_IDLE threads pinned to CPUs %v; want one on each of %d", pinned, runtime.NumCPU())
	}
	r.exec("h1", "ping", "-c", "3", "-i", "0.2", "10.0.0.2")
	r.stop()
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", keeper)); !os.IsNotExist(err) {
		t.Errorf("the CPU keeper %d remains after the lab stopped", keeper)
	}
}

// A lab killed with -9 takes its CPU keeper with it (the keeper ends when
// its input does), and down removes the rest.
func TestKeepCPUsAwakeKeeperEndsWhenUpIsKilled(t *testing.T) {
	requireRoot(t)
	r := up(t, strings.ReplaceAll(pairLab, "RATE", "100M"), "--keep-cpus-awake")
	keeper := keeperOf(t, r, true)
	r.cmd.Process.Kill()
	select {
	case <-r.done:
	case <-time.After(10 * time.Second):
		t.Fatal("atmlab up did not die")
	}
	gone := false
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline) && !gone; time.Sleep(50 * time.Millisecond) {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", keeper))
		gone = err != nil || strings.Contains(string(stat), ") Z ")
	}
	if !gone {
		t.Errorf("the CPU keeper %d still runs 5s after atmlab up was killed", keeper)
	}
	if out, err := exec.Command(atmlab, "down", r.name).CombinedOutput(); err != nil {
		t.Fatalf("down: %v\n%s", err, out)
	}
}
