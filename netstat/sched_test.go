package netstat

import (
	"os"
	"testing"
	"time"
)

func TestParseSchedstat(t *testing.T) {
	run, wait, err := ParseSchedstat("776249717 813185134 21332\n")
	if err != nil || run != 776249717 || wait != 813185134 {
		t.Errorf("got %v %v %v, want 776.249717ms 813.185134ms", run, wait, err)
	}
	for _, bad := range []string{"", "12", "a 1 2", "1 -2 3", "99999999999999999999 1 1"} {
		if _, _, err := ParseSchedstat(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func FuzzParseSchedstat(f *testing.F) {
	f.Add("776249717 813185134 21332")
	f.Fuzz(func(t *testing.T, line string) {
		if run, wait, err := ParseSchedstat(line); err == nil && (run < 0 || wait < 0) {
			t.Errorf("%q: negative %v %v", line, run, wait)
		}
	})
}

// TestSchedCountsThisProcessRunning: a thread that spins for 50 ms spent
// them running or waiting runnable for a CPU (on a busy machine, mostly
// waiting), so its process's two figures grew by about that much.
func TestSchedCountsThisProcessRunning(t *testing.T) {
	run0, wait0, err := Sched(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(50 * time.Millisecond); time.Now().Before(end); {
	}
	run1, wait1, err := Sched(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if d := run1 - run0 + wait1 - wait0; d < 40*time.Millisecond || run1 <= run0 {
		t.Errorf("ran %v and waited %v more while spinning 50 ms", run1-run0, wait1-wait0)
	}
	if _, _, err := Sched(-1); err == nil {
		t.Error("no error for a process that cannot exist")
	}
}
