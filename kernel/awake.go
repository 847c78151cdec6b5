//go:build linux

package kernel

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// awakeEnv marks the child KeepCPUsAwake starts: its value is the pid of
// the process that started it, so that a stray variable makes nothing
// spin.
const awakeEnv = "ATMLAB_KEEP_CPUS_AWAKE"

// Awake is a running keeper (KeepCPUsAwake): a child process with one
// thread per CPU this process may run on, each at SCHED_IDLE, the
// kernel's lowest class, calling sched_yield in a loop. A CPU with
// anything else to run runs it first; one with nothing never goes idle,
// so on a VM whose idle vCPUs halt into the hypervisor (no cpuidle
// driver, as on this machine kind) waking a thread there costs no return
// from the hypervisor, as the kernel's idle=poll would have it.
type Awake struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	done bool
}

// KeepCPUsAwake starts a keeper and waits until each of its threads runs
// at SCHED_IDLE on its CPU. It ends when Close is called or when this
// process ends (its standard input closes).
func KeepCPUsAwake() (*Awake, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self)
	cmd.Args[0] = "atmlab-keep-cpus-awake"
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d", awakeEnv, os.Getpid()))
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("keep CPUs awake: %w", err)
	}
	a := &Awake{cmd: cmd, in: in}
	ready := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		ready <- strings.TrimSpace(line)
		io.Copy(io.Discard, out)
	}()
	select {
	case line := <-ready:
		if line == "ready" {
			return a, nil
		}
		a.Close()
		return nil, fmt.Errorf("keep CPUs awake: %s", strings.TrimPrefix(line, "error: "))
	case <-time.After(5 * time.Second):
		a.Close()
		return nil, errors.New("keep CPUs awake: the keeper did not start within 5s")
	}
}

// Pid is the keeper's process id.
func (a *Awake) Pid() int { return a.cmd.Process.Pid }

// Close ends the keeper and waits for it; a second call does nothing.
func (a *Awake) Close() error {
	if a == nil || a.done {
		return nil
	}
	a.done = true
	a.in.Close() // it ends at end of input
	t := time.AfterFunc(5*time.Second, func() { a.cmd.Process.Kill() })
	defer t.Stop()
	return a.cmd.Wait()
}

// KeepAwakeIfAsked is the keeper's body: in the child KeepCPUsAwake
// started it keeps the CPUs awake until its standard input ends, then
// exits; in any other process it returns at once. Call it first in main.
func KeepAwakeIfAsked() {
	if v := os.Getenv(awakeEnv); v == "" || v != strconv.Itoa(os.Getppid()) {
		return
	}
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		fmt.Printf("error: %v\n", err)
		os.Exit(1)
	}
	var cpus []int
	for cpu := range 1024 {
		if set.IsSet(cpu) {
			cpus = append(cpus, cpu)
		}
	}
	runtime.GOMAXPROCS(len(cpus) + 1) // a P left to read the input
	started := make(chan error)
	for _, cpu := range cpus {
		go stayAwake(cpu, started)
	}
	for range cpus {
		if err := <-started; err != nil {
			fmt.Printf("error: %v\n", err)
			os.Exit(1)
		}
	}
	fmt.Println("ready")
	io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}

// stayAwake runs on cpu at SCHED_IDLE for ever, yielding in a loop: a
// system call rather than the CPU's pause, which a hypervisor may take
// as a spinning lock holder's and deschedule the vCPU for.
func stayAwake(cpu int, started chan<- error) {
	runtime.LockOSThread()
	var set unix.CPUSet
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		started <- fmt.Errorf("CPU %d: %w", cpu, err)
		return
	}
	if err := unix.SchedSetAttr(0, &unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_IDLE}, 0); err != nil {
		started <- fmt.Errorf("CPU %d: SCHED_IDLE: %w", cpu, err)
		return
	}
	started <- nil
	for {
		unix.RawSyscall(unix.SYS_SCHED_YIELD, 0, 0, 0)
	}
}
