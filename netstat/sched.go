package netstat

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ParseSchedstat reads one /proc/PID/task/TID/schedstat line: the time the
// thread ran on a CPU and the time it waited runnable for one (its run
// queue delay), both in nanoseconds (Documentation/scheduler/sched-stats).
func ParseSchedstat(line string) (run, wait time.Duration, err error) {
	f := strings.Fields(line)
	if len(f) < 2 {
		return 0, 0, fmt.Errorf("netstat: schedstat %q: want at least 2 figures", line)
	}
	var d [2]time.Duration
	for i := range d {
		n, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil || n < 0 {
			return 0, 0, fmt.Errorf("netstat: schedstat %q: figure %d is not a count of nanoseconds", line, i+1)
		}
		d[i] = time.Duration(n)
	}
	return d[0], d[1], nil
}

// Sched is the time a process's threads ran and the time they waited
// runnable for a CPU, summed over its threads now: on a machine whose
// cores the hosts share with each other and the emulator, the wait is how
// far a host's tool was from having a core of its own. Threads that ended
// are not counted.
func Sched(pid int) (run, wait time.Duration, err error) {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	if err != nil || len(tasks) == 0 {
		return 0, 0, fmt.Errorf("netstat: process %d: no threads to read (%v)", pid, err)
	}
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue // the thread ended meanwhile
		}
		r, w, err := ParseSchedstat(string(b))
		if err != nil {
			return 0, 0, err
		}
		run, wait = run+r, wait+w
	}
	return run, wait, nil
}
