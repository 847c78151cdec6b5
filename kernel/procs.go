//go:build linux

package kernel

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// HostsCPU is the CPU time (user and system) that the processes now inside
// the lab's namespaces have used so far, from /proc/PID/stat: the tools a
// run started in its hosts. With OwnCPU it is the lab's share of the
// machine, and the machine's busy time less both is its other load.
func (k *Lab) HostsCPU() time.Duration {
	type id struct{ dev, ino uint64 }
	ours := map[id]bool{}
	for _, ns := range k.namespaces {
		var st syscall.Stat_t
		if syscall.Stat(filepath.Join(NetnsDir, ns), &st) == nil {
			ours[id{st.Dev, st.Ino}] = true
		}
	}
	var sum time.Duration
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		var st syscall.Stat_t
		if syscall.Stat("/proc/"+p.Name()+"/ns/net", &st) != nil || !ours[id{st.Dev, st.Ino}] {
			continue
		}
		if b, err := os.ReadFile("/proc/" + p.Name() + "/stat"); err == nil {
			if d, err := statCPU(b); err == nil {
				sum += d
			}
		}
	}
	return sum
}

// OwnCPU is the CPU time this process and the children it has waited for
// have used so far (a tool that ran in a host and exited is counted here
// once reaped, as long as it ran it was in HostsCPU).
func OwnCPU() time.Duration {
	var sum time.Duration
	for _, who := range []int{unix.RUSAGE_SELF, unix.RUSAGE_CHILDREN} {
		var ru unix.Rusage
		if unix.Getrusage(who, &ru) == nil {
			sum += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		}
	}
	return sum
}

// statCPU returns the user and system time in a /proc/PID/stat line
// (its 14th and 15th fields, in USER_HZ ticks of 10 ms).
func statCPU(b []byte) (time.Duration, error) {
	i := bytes.LastIndexByte(b, ')') // the command may hold spaces and parentheses
	if i < 0 {
		return 0, fmt.Errorf("no command in %q", b)
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("%d fields after the command, want at least 13", len(f))
	}
	var ticks uint64
	for _, v := range f[11:13] {
		n, err := strconv.ParseUint(string(v), 10, 63)
		if err != nil {
			return 0, err
		}
		ticks += n
	}
	return time.Duration(ticks) * 10 * time.Millisecond, nil
}
