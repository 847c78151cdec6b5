//go:build integration

package test

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/atmlab/atmlab/kernel"
)

// launch is an `atmlab up` started without waiting: ready receives true on
// its ready line, false if it exited first; then exit receives its end.
type launch struct {
	cmd    *exec.Cmd
	stderr bytes.Buffer
	ready  chan bool
	exit   chan error
}

func startUp(t *testing.T, file string) *launch {
	t.Helper()
	l := &launch{cmd: exec.Command(atmlab, "up", file), ready: make(chan bool, 1), exit: make(chan error, 1)}
	l.cmd.Stderr = &l.stderr
	stdout, _ := l.cmd.StdoutPipe()
	if err := l.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		sent := false
		for sc.Scan() {
			if !sent && strings.Contains(sc.Text(), "ready") {
				l.ready <- true
				sent = true
			}
		}
		if !sent {
			l.ready <- false
		}
		l.exit <- l.cmd.Wait()
	}()
	t.Cleanup(func() {
		if l.cmd.ProcessState == nil {
			l.cmd.Process.Signal(syscall.SIGINT)
			select {
			case <-l.exit:
			case <-time.After(15 * time.Second):
				l.cmd.Process.Kill()
			}
		}
	})
	return l
}

// stop ends a ready lab with SIGINT and checks that it exited cleanly.
func (l *launch) stop(t *testing.T) {
	t.Helper()
	l.cmd.Process.Signal(syscall.SIGINT)
	select {
	case err := <-l.exit:
		if err != nil {
			t.Errorf("atmlab up after SIGINT: %v\n%s", err, l.stderr.String())
		}
	case <-time.After(15 * time.Second):
		l.cmd.Process.Kill()
		t.Errorf("atmlab up did not stop within 15 s of SIGINT")
	}
}

func writeLab(t *testing.T, lab, name string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), name+".yaml")
	if err := os.WriteFile(file, []byte(strings.ReplaceAll(strings.ReplaceAll(lab, "NAME", name), "RATE", "100M")), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// up whose output nobody reads any more (`atmlab up lab.yaml | tee log`
// stopped by Ctrl-C, which ends tee first) still removes everything it
// made on SIGINT: its lines as it stops go into closed pipes.
func TestUpStopsCleanlyWithItsOutputClosed(t *testing.T) {
	requireRoot(t)
	name := labName()
	t.Cleanup(func() { exec.Command(atmlab, "down", name).Run() }) // what a failed run left
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(atmlab, "up", writeLab(t, pairLab, name))
	cmd.Stdout, cmd.Stderr = outW, errW
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	outW.Close()
	errW.Close()
	l := &launch{cmd: cmd, ready: make(chan bool, 1), exit: make(chan error, 1)}
	go func() { l.exit <- cmd.Wait() }()
	go func() {
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "ready") {
				l.ready <- true
				return
			}
		}
		l.ready <- false
	}()
	select {
	case ok := <-l.ready:
		if !ok {
			t.Fatalf("up ended before its ready line: %v", <-l.exit)
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("up not ready after 30 s")
	}
	if len(namespaces(name)) != 2 {
		t.Fatalf("up is ready with namespaces %v, want two", namespaces(name))
	}
	outR.Close()
	errR.Close()
	l.stop(t) // SIGINT: up must end cleanly, its lines going nowhere
	if left := namespaces(name); len(left) > 0 {
		t.Errorf("after SIGINT with its output closed, namespaces remain: %v", left)
	}
}

// A namespace with a lab's name that atmlab did not make, and
// the process in it, survive a refused up of the lab, up of another lab
// whose name it extends, and down.
func TestDecoySurvives(t *testing.T) {
	requireRoot(t)
	name := labName()
	decoy := name + "-h2"
	if out, err := exec.Command("ip", "netns", "add", decoy).CombinedOutput(); err != nil {
		t.Fatalf("ip netns add: %v %s", err, out)
	}
	defer exec.Command("ip", "netns", "del", decoy).Run()
	sleeper := exec.Command("ip", "netns", "exec", decoy, "sleep", "600")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { sleeper.Process.Kill(); sleeper.Wait() }()
	alive := func(when string) {
		t.Helper()
		if _, err := os.Stat(filepath.Join(kernel.NetnsDir, decoy)); err != nil {
			t.Fatalf("%s: the decoy namespace is gone: %v", when, err)
		}
		if err := sleeper.Process.Signal(syscall.Signal(0)); err != nil {
			t.Fatalf("%s: the process in the decoy is gone: %v", when, err)
		}
	}

	out, err := exec.Command(atmlab, "up", writeLab(t, pairLab, name)).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "namespace "+decoy+" exists and is not this lab's") {
		t.Errorf("up with the decoy in the way: %v %s", err, out)
	}
	alive("after the refused up")
	if ns := namespaces(name); !slices.Equal(ns, []string{decoy}) {
		t.Errorf("after the refused up: namespaces %v, want only the decoy", ns)
	}

	other := startUp(t, writeLab(t, pairLab, name+"-x")) // its namespaces begin with the decoy's lab's name too
	if !<-other.ready {
		t.Fatalf("up of another lab: %s", other.stderr.String())
	}
	alive("with another lab up")
	out, err = exec.Command(atmlab, "down", name).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "nothing to remove") {
		t.Errorf("down %s: %v %s", name, err, out)
	}
	alive("after down")
	if ns := namespaces(name + "-x"); len(ns) != 2 {
		t.Errorf("down %s touched lab %s-x: its namespaces are %v", name, name, ns)
	}
	other.stop(t)
	alive("after the other lab stopped")
}

// Two up of one lab, the second 0, 10 or 50 ms after the first:
// one runs, the other refuses and touches nothing of it.
func TestStartRace(t *testing.T) {
	requireRoot(t, "ping")
	for _, offset := range []time.Duration{0, 10 * time.Millisecond, 50 * time.Millisecond} {
		name := labName()
		file := writeLab(t, pairLab, name)
		a := startUp(t, file)
		time.Sleep(offset) // the race's offset is the point
		b := startUp(t, file)
		ra, rb := <-a.ready, <-b.ready
		if ra == rb {
			t.Fatalf("offset %v: ready %v and %v, want exactly one\nfirst: %s\nsecond: %s", offset, ra, rb, a.stderr.String(), b.stderr.String())
		}
		win, lose := a, b
		if rb {
			win, lose = b, a
		}
		<-lose.exit
		if msg := lose.stderr.String(); !strings.Contains(msg, "lab "+name+" is up or starting in ") || !strings.Contains(msg, "this run changed nothing") {
			t.Errorf("offset %v: the loser said %q", offset, msg)
		}
		// The winner's lab is whole: both hosts answer and stats works.
		if out, err := exec.Command(atmlab, "exec", name, "h1", "--", "ping", "-c", "1", "-W", "2", "10.0.0.2").CombinedOutput(); err != nil {
			t.Errorf("offset %v: ping through the winner's lab: %v %s", offset, err, out)
		}
		if out, err := exec.Command(atmlab, "stats", name).CombinedOutput(); err != nil {
			t.Errorf("offset %v: stats of the winner's lab: %v %s", offset, err, out)
		}
		win.stop(t)
		if ns := namespaces(name); len(ns) > 0 {
			t.Errorf("offset %v: left %v", offset, ns)
		}
	}
}

// The congestion controls atmlab adds to the host-wide list
// are taken back per lab: not while another lab needs them, and by down
// after kill -9.
func TestCongestionRestore(t *testing.T) {
	requireRoot(t)
	const sysctl = "/proc/sys/net/ipv4/tcp_allowed_congestion_control"
	orig, err := os.ReadFile(sysctl)
	if err != nil {
		t.Fatal(err)
	}
	defer os.WriteFile(sysctl, orig, 0)
	without := slices.DeleteFunc(strings.Fields(string(orig)), func(s string) bool { return s == "reno" })
	if err := os.WriteFile(sysctl, []byte(strings.Join(without, " ")), 0); err != nil {
		t.Fatal(err)
	}
	allowed := func() []string {
		b, _ := os.ReadFile(sysctl)
		return strings.Fields(string(b))
	}
	renoLab := strings.ReplaceAll(pairLab, "cubic", "reno")
	a := startUp(t, writeLab(t, renoLab, labName()))
	nameB := labName()
	b := startUp(t, writeLab(t, renoLab, nameB))
	if !<-a.ready || !<-b.ready {
		t.Fatalf("up: %s %s", a.stderr.String(), b.stderr.String())
	}
	if !slices.Contains(allowed(), "reno") {
		t.Fatalf("with two reno labs up, allowed is %v", allowed())
	}
	a.stop(t)
	if !slices.Contains(allowed(), "reno") {
		t.Errorf("the first lab's teardown took reno from the second: allowed %v", allowed())
	}
	b.cmd.Process.Kill()
	<-b.exit
	if out, err := exec.Command(atmlab, "down", nameB).CombinedOutput(); err != nil {
		t.Fatalf("down: %v %s", err, out)
	}
	if got := allowed(); !slices.Equal(got, without) {
		t.Errorf("after kill -9 and down, allowed is %v, want %v", got, without)
	}
}

// A lab's control socket is root's (0600 whatever the
// umask); another user's stats says permission denied, not "not running",
// and even through a socket opened to all, SO_PEERCRED refuses them; their
// down fails saying to use sudo, and root's down of a running lab refuses.
func TestControlAccess(t *testing.T) {
	requireRoot(t)
	dir := filepath.Dir(atmlab)
	os.Chmod(dir, 0o755) // let nobody run the binary under test
	name := labName()
	l := startUp(t, writeLab(t, pairLab, name))
	if !<-l.ready {
		t.Fatalf("up: %s", l.stderr.String())
	}
	sock := kernel.SocketPath(name)
	if fi, err := os.Stat(sock); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("control socket %v %v, want mode 0600", fi.Mode(), err)
	}
	asNobody := func(args ...string) (string, error) {
		cmd := exec.Command(atmlab, args...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := asNobody("stats", name); err == nil || !strings.Contains(out, "permission denied") {
		t.Errorf("stats as nobody: %v %s", err, out)
	}
	if out, err := asNobody("down", name); err == nil || !strings.Contains(out, "sudo atmlab down "+name) {
		t.Errorf("down as nobody: %v %s", err, out)
	}
	os.Chmod(sock, 0o666) // as a umask of 000 once left it
	if out, err := asNobody("stats", name); err == nil || !strings.Contains(out, "permission denied: only root or uid 0") {
		t.Errorf("stats as nobody through an open socket: %v %s", err, out)
	}
	if out, err := exec.Command(atmlab, "down", name).CombinedOutput(); err == nil || !strings.Contains(string(out), "is up or starting in pid") {
		t.Errorf("down of a running lab: %v %s", err, out)
	}
	if ns := namespaces(name); len(ns) != 2 {
		t.Errorf("after the refused downs: namespaces %v", ns)
	}
	if out, err := exec.Command(atmlab, "stats", name).CombinedOutput(); err != nil {
		t.Errorf("stats as root: %v %s", err, out)
	}
	l.stop(t)
	for _, f := range []string{sock, kernel.LockPath(name)} {
		if _, err := os.Stat(f); !os.IsNotExist(err) {
			t.Errorf("%s left after the lab stopped: %v", f, err)
		}
	}
}
