package labshell

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/term"

	"github.com/atmlab/atmlab/control"
	"github.com/atmlab/atmlab/internal/shellquote"
	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/settings"
)

// fakeLab runs a node's command on this machine as `sh -c` with NODE set,
// and records the control calls.
type fakeLab struct {
	sets    []string
	started chan string                             // if not nil, each command's node as it is made
	script  func(node string, argv []string) string // the sh script for a command
}

func (f *fakeLab) Command(ctx context.Context, node string, argv []string) *exec.Cmd {
	if f.started != nil {
		f.started <- node
	}
	script := "echo " + node + ": " + strings.Join(argv, " ")
	if f.script != nil {
		script = f.script(node, argv)
	}
	return exec.CommandContext(ctx, "sh", "-c", script)
}

func (f *fakeLab) Set(_ context.Context, endpoint, direction string, c settings.Change) (*control.Changed, error) {
	f.sets = append(f.sets, endpoint+" "+direction+" "+c.String())
	return &control.Changed{Directions: []string{"changed " + endpoint}}, nil
}

func (f *fakeLab) Stats(_ context.Context, w io.Writer) error {
	_, err := io.WriteString(w, "port rx frames\n")
	return err
}

func (f *fakeLab) Capture(context.Context, string, bool, io.Writer, int) (int, error) {
	return 0, nil
}

// quoted is a node's command as it is, for sh -c.
func quoted(_ string, argv []string) string {
	var q []string
	for _, a := range argv {
		q = append(q, shellquote.Quote(a))
	}
	return strings.Join(q, " ")
}

var threeHosts = topologies.View{
	Lab: "t",
	Nodes: []topologies.ViewNode{
		{Name: "h1", Kind: topologies.KindHost, Interfaces: []string{"eth0 10.0.0.1/24"}},
		{Name: "h2", Kind: topologies.KindHost, Interfaces: []string{"eth0 10.0.0.2/24"}},
		{Name: "sw1", Kind: topologies.KindSwitch},
		{Name: "h3", Kind: topologies.KindHost, Interfaces: []string{"eth0 10.0.0.3/24", "eth1 10.0.1.3/24"}},
	},
	Links: []topologies.ViewLink{{A: "h1:eth0", B: "sw1:p1", AB: topologies.ViewDir{Text: "100M"}}},
}

func newShell(lab Lab) (*Shell, *bytes.Buffer, *bytes.Buffer) {
	var out, errOut bytes.Buffer
	return &Shell{Lab: lab, View: threeHosts, Stdout: &out, Stderr: &errOut}, &out, &errOut
}

func TestNodeCommandGetsAddressesForNames(t *testing.T) {
	sh, out, _ := newShell(&fakeLab{})
	if err := sh.Run(context.Background(), "h1 ping h3"); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), "h1: ping -c 4 10.0.0.3\n"; got != want {
		t.Errorf("output %q, want %q", got, want)
	}
}

func TestUnknownNodeOrCommandIsAnErrorNamingTheHosts(t *testing.T) {
	sh, _, _ := newShell(&fakeLab{})
	for _, line := range []string{"h9 ping h1", "sw1 ping h1", "pingal"} {
		err := sh.Run(context.Background(), line)
		if err == nil || !strings.Contains(err.Error(), "hosts: h1 h2 h3") {
			t.Errorf("%q: %v, want an error listing the hosts", line, err)
		}
	}
}

func TestSetParsesAtmlabSetsWords(t *testing.T) {
	f := &fakeLab{}
	sh, out, _ := newShell(f)
	if err := sh.Run(context.Background(), "set h1:eth0 delay=20ms --direction sw1:p1"); err != nil {
		t.Fatal(err)
	}
	if err := sh.Run(context.Background(), "set h1:eth0 --reset"); err != nil {
		t.Fatal(err)
	}
	if len(f.sets) != 2 || !strings.HasPrefix(f.sets[0], "h1:eth0 sw1:p1 ") || !strings.Contains(f.sets[0], "delay=20ms") ||
		!strings.HasPrefix(f.sets[1], "h1:eth0  ") || !strings.Contains(f.sets[1], "reset") {
		t.Errorf("changes %q", f.sets)
	}
	if !strings.Contains(out.String(), "changed h1:eth0") {
		t.Errorf("output %q, want the changed directions", out.String())
	}
	for _, line := range []string{"set", "set h1:eth0", "set h1:eth0 delay=soon", "set h1:eth0 --direction", "set h1:eth0 --force"} {
		if err := sh.Run(context.Background(), line); err == nil {
			t.Errorf("%q: no error", line)
		}
	}
	if len(f.sets) != 2 {
		t.Errorf("a refused line reached the lab: %q", f.sets)
	}
}

func TestPingallPrintsAMatrixAndTheLoss(t *testing.T) {
	// h3 answers nobody.
	f := &fakeLab{script: func(node string, argv []string) string {
		if argv[len(argv)-1] == "10.0.0.3" {
			return "exit 1"
		}
		return "exit 0"
	}}
	sh, out, _ := newShell(f)
	if err := sh.Run(context.Background(), "pingall"); err != nil {
		t.Fatal(err)
	}
	want := "h1 -> h2 X\nh2 -> h1 X\nh3 -> h1 h2\npingall: 33% dropped (4/6 received)\n"
	if out.String() != want {
		t.Errorf("pingall printed\n%s\nwant\n%s", out, want)
	}
}

func TestAFailedLineDoesNotEndTheShell(t *testing.T) {
	sh, out, errOut := newShell(&fakeLab{script: quoted})
	in := NewScript(strings.NewReader("bogus\nh1 sh -c 'exit 3'\nset h1:eth0\nh2 echo 'x\nstats\nexit\nstats\n"))
	failed := sh.Loop(context.Background(), in, nil)
	if failed != 4 {
		t.Errorf("%d lines failed, want 4; errors:\n%s", failed, errOut)
	}
	if n := strings.Count(out.String(), "port rx frames"); n != 1 {
		t.Errorf("stats ran %d times, want once (before exit): %q", n, out)
	}
	if !strings.Contains(errOut.String(), "exited with status 3") {
		t.Errorf("errors %q do not give the exit status", errOut)
	}
}

func TestInterruptStopsTheCommandNotTheShell(t *testing.T) {
	// Every ping hangs: pingall is stopped by Ctrl-C too.
	f := &fakeLab{script: func(node string, argv []string) string {
		if argv[0] == "ping" {
			return "exec sleep 30"
		}
		return quoted(node, argv)
	}, started: make(chan string, 10)}
	sh, out, errOut := newShell(f)
	interrupts := make(chan os.Signal, 1)
	go func() {
		for range 2 { // the sleep, then pingall's first ping
			<-f.started
			time.Sleep(100 * time.Millisecond)
			interrupts <- os.Interrupt
		}
	}()
	start := time.Now()
	failed := sh.Loop(context.Background(), NewScript(strings.NewReader("h1 exec sleep 30\npingall\nh2 echo after\n")), interrupts)
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("the interrupted command ran %v", d)
	}
	if failed != 0 || out.String() != "after\n" {
		t.Errorf("after the interrupt: %d failed, output %q, errors %q; want the next line to run", failed, out, errOut)
	}
}

func TestCtrlCAtThePromptDropsTheLine(t *testing.T) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer ptmx.Close()
	defer tty.Close()
	go io.Copy(io.Discard, ptmx) // the prompt and the echo
	// Raw from the start: between two lines ReadLine restores the mode it
	// found, and a cooked terminal there would make the Ctrl-C typed ahead
	// a signal.
	if _, err := term.MakeRaw(int(tty.Fd())); err != nil {
		t.Fatal(err)
	}
	in := NewTerminal(tty, tty, "t> ")
	lines := make(chan string, 3)
	go func() {
		for {
			line, err := in.ReadLine()
			if err != nil {
				close(lines)
				return
			}
			lines <- line
		}
	}()
	// One key at a time, as a person types, then lines typed ahead while a
	// command ran, read at once.
	for _, b := range []byte("h1 ping h2\x03pingall\r") {
		ptmx.Write([]byte{b})
		time.Sleep(2 * time.Millisecond)
	}
	ptmx.Write([]byte("stats\rh1 ping h3\x03\x03nodes\r\x04"))
	var got []string
	timeout := time.After(5 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				if want := []string{"pingall", "stats", "nodes"}; !slices.Equal(got, want) {
					t.Errorf("lines read %q, want %q", got, want)
				}
				return
			}
			got = append(got, l)
		case <-timeout:
			t.Fatalf("lines read %q, and no end of input after Ctrl-D", got)
		}
	}
}

// blocked is input that never comes.
type blocked struct{}

func (blocked) ReadLine() (string, error) { select {} }

func TestTerminationEndsTheShellWhileItWaitsForALine(t *testing.T) {
	sh, _, _ := newShell(&fakeLab{})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	done := make(chan int, 1)
	go func() { done <- sh.Loop(ctx, blocked{}, nil) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the shell still waits for a line after its context ended")
	}
}
