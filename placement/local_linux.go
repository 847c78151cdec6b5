//go:build linux

package placement

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/atmlab/atmlab/harness/results"
	"github.com/atmlab/atmlab/kernel"
)

// firstMachine is the address of kernel.VethPair's first end; the second's
// it returns.
const firstMachine = "192.0.2.1"

// stopWait is how long a part has to take its lab down after SIGINT
// before it is killed (its down then removes what it left).
var stopWait = 30 * time.Second

// localRunner runs a two-part lab on this machine: each part in a network
// namespace of its own (a "machine", kernel.VethPair's, named
// <lab>-split-probe-a and -b and marked as the lab <lab>-split's, so that
// no part's own teardown touches them), the two joined by a veth,
// 192.0.2.1 and 192.0.2.2.
type localRunner struct {
	s        Split
	w        io.Writer
	out      *results.Folder
	unlock   func() // the split lab's lock, held from start to stop
	machines [2]string
	remove   func() error
	cmds     []*exec.Cmd
	done     []chan struct{} // closed as each part's process ends
	errs     []error         // each part's end, once done is closed
}

// machineLab is the name the machines are marked with: never a part's
// lab (LAB-PART: a part's name has no hyphen), so no part's own teardown
// touches them.
func machineLab(lab string) string { return lab + "-split-machines" }

func newLocal(s Split, w io.Writer) (runner, error) {
	if len(s.Parts) != 2 {
		return nil, fmt.Errorf("%s has %d parts: the local engine runs two, one per machine namespace joined by a veth; place more on slurm or kubernetes", s.File, len(s.Parts))
	}
	if err := kernel.RequireRoot(); err != nil {
		return nil, err
	}
	return &localRunner{s: s, w: w}, nil
}

// lockSplit takes the split lab's lock on this machine, held while it is
// up, so that a down does not pull it from under a running up. Its file
// goes when it is released (unlock), as the kernel's lab locks do: a lock
// taken on a file removed meanwhile guards nothing, so it is taken again.
func lockSplit(lab string) (unlock func(), err error) {
	if err := os.MkdirAll(kernel.RunDir, 0o755); err != nil {
		return nil, err
	}
	path := filepath.Join(kernel.RunDir, machineLab(lab)+".lock")
	for {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o644)
		if err != nil {
			return nil, err
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			f.Close()
			return nil, fmt.Errorf("split lab %s is up on this machine (%s is held): stop it with SIGINT", lab, path)
		}
		var got, now syscall.Stat_t
		if syscall.Fstat(int(f.Fd()), &got) == nil && syscall.Stat(path, &now) == nil && got.Ino == now.Ino && got.Dev == now.Dev {
			return func() { os.Remove(path); f.Close() }, nil
		}
		f.Close()
	}
}

func (l *localRunner) start(ctx context.Context, out *results.Folder) error {
	l.out = out
	var err error
	if l.unlock, err = lockSplit(l.s.Lab); err != nil {
		return err
	}
	if err := removeLocal(l.s, io.Discard); err != nil { // what a killed run left
		return err
	}
	names, second, remove, err := kernel.VethPair(machineLab(l.s.Lab))
	if err != nil {
		return fmt.Errorf("the machines: %w", err)
	}
	l.machines, l.remove = names, remove
	addrs := [2]string{firstMachine, second}
	n := len(l.s.Parts)
	l.cmds, l.done, l.errs = make([]*exec.Cmd, 0, n), make([]chan struct{}, 0, n), make([]error, n)
	for k := range l.s.Parts {
		f, err := out.Create(l.s.LogName(k))
		if err != nil {
			return err
		}
		// Only the machine's network namespace: ip netns exec would give
		// the part a mount namespace of its own, and the namespaces it
		// makes (mounted under /run/netns) would never be seen outside it.
		// nsenter execs the part, so signals reach it.
		args := append([]string{"--net=" + filepath.Join(kernel.NetnsDir, names[k]), l.s.Binary}, l.s.PartArgs(l.s.File, k, func(j int) string { return addrs[j] })...)
		fmt.Fprintf(l.w, "part %s: machine %s (%s), log %s\n", l.s.Parts[k], names[k], addrs[k], out.Join(l.s.LogName(k)))
		cmd := exec.Command("nsenter", args...)
		cmd.Stdout, cmd.Stderr = f, f
		err = cmd.Start()
		f.Close()
		if err != nil {
			return fmt.Errorf("part %s: %w", l.s.Parts[k], err)
		}
		done := make(chan struct{})
		l.cmds, l.done = append(l.cmds, cmd), append(l.done, done)
		go func() { l.errs[k] = cmd.Wait(); close(done) }()
	}
	return nil
}

func (l *localRunner) log(k int) []byte {
	if l.out == nil {
		return nil
	}
	b, _ := l.out.ReadFile(l.s.LogName(k), 0)
	return b
}

func (l *localRunner) stopped() string {
	for k, done := range l.done {
		select {
		case <-done:
			end := "exited"
			if l.errs[k] != nil {
				end = l.errs[k].Error()
			}
			return fmt.Sprintf("part %s %s: %s", l.s.Parts[k], end, lastLine(l.log(k)))
		default:
		}
	}
	return ""
}

// stop interrupts each part, kills one that has not ended after stopWait,
// then runs each part's down and removes the machines.
func (l *localRunner) stop(out *results.Folder) error {
	if l.unlock == nil {
		return nil
	}
	defer l.unlock()
	var errs []error
	for k, done := range l.done {
		select {
		case <-done:
		default: // still up: its last stats (a part that cannot say them is still stopped), then SIGINT
			if f, err := l.out.Create(l.s.StatsName(k)); err == nil {
				if err := l.keep(k, f, l.s.StatsArgs(k)); err != nil {
					fmt.Fprintln(l.w, err)
				}
				f.Close()
			}
			l.cmds[k].Process.Signal(os.Interrupt)
		}
	}
	for k, done := range l.done {
		select {
		case <-done:
		case <-time.After(stopWait):
			fmt.Fprintf(l.w, "part %s: still up %v after SIGINT: killed\n", l.s.Parts[k], stopWait)
			l.cmds[k].Process.Kill()
			<-done
		}
	}
	for k := range l.s.Parts {
		f, _, err := l.out.Append(l.s.LogName(k))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		errs = append(errs, l.keep(k, f, l.s.DownArgs(k)))
		f.Close()
	}
	if l.remove != nil {
		errs = append(errs, l.remove())
	}
	return errors.Join(errs...)
}

// keep runs atmlab with args for part k, its output into f.
func (l *localRunner) keep(k int, f *os.File, args []string) error {
	cmd := exec.Command(l.s.Binary, args...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("part %s: atmlab %s: %w", l.s.Parts[k], strings.Join(args, " "), err)
	}
	return nil
}

// downLocal is Down on this machine: refused while the split lab is up.
func downLocal(s Split, w io.Writer) error {
	if len(s.Parts) != 2 {
		return fmt.Errorf("%s has %d parts: the local engine runs two", s.File, len(s.Parts))
	}
	if err := kernel.RequireRoot(); err != nil {
		return err
	}
	unlock, err := lockSplit(s.Lab)
	if err != nil {
		return err
	}
	defer unlock()
	return removeLocal(s, w)
}

// removeLocal removes the machines (and so kills what runs in them: the
// parts' processes), then runs each part's down, saying what it did on w.
func removeLocal(s Split, w io.Writer) error {
	owned, err := kernel.Owned(machineLab(s.Lab))
	if err != nil {
		return err
	}
	removed, err := kernel.Remove(owned)
	if len(removed) > 0 {
		fmt.Fprintf(w, "split lab %s: removed machines %s\n", s.Lab, strings.Join(removed, " "))
	}
	errs := []error{err}
	for k := range s.Parts {
		kernel.AwaitStopped(s.PartLab(k), 10*time.Second) // a part killed with its machine lets go of its lab a moment later
		cmd := exec.Command(s.Binary, s.DownArgs(k)...)
		cmd.Stdout, cmd.Stderr = w, w
		if err := cmd.Run(); err != nil {
			errs = append(errs, fmt.Errorf("part %s: atmlab %s: %w", s.Parts[k], strings.Join(s.DownArgs(k), " "), err))
		}
	}
	return errors.Join(errs...)
}
