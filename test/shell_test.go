//go:build integration

package test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/atmlab/atmlab/internal/labtest"
)

// terminal is atmlab shell on a pseudo-terminal, as a person sees it.
type terminal struct {
	t    *testing.T
	mu   sync.Mutex
	out  strings.Builder // everything the shell wrote
	seen int             // how much of out the last expect consumed
	cmd  *exec.Cmd
	done chan error
	tty  interface{ Write([]byte) (int, error) }
}

// expect waits until the shell writes want after what the last expect
// consumed, and returns what it wrote up to it.
func (p *terminal) expect(want string, within time.Duration) string {
	p.t.Helper()
	deadline := time.Now().Add(within)
	for {
		p.mu.Lock()
		rest := p.out.String()[p.seen:]
		if i := strings.Index(rest, want); i >= 0 {
			p.seen += i + len(want)
			p.mu.Unlock()
			return rest[:i+len(want)]
		}
		p.mu.Unlock()
		if time.Now().After(deadline) {
			p.t.Fatalf("no %q from atmlab shell within %v; it wrote:\n%s", want, within, rest)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// typeLine types a line as a person does and presses Enter.
func (p *terminal) typeLine(line string) {
	p.tty.Write([]byte(line + "\r"))
}

func TestShellOnAPseudoTerminal(t *testing.T) {
	requireRoot(t, "iperf3", "ping")
	r := up(t, labtest.Lab("three-hosts-switch", "NAME"))
	p := &terminal{t: t, done: make(chan error, 1), cmd: exec.Command(atmlab, "shell", r.name)}
	ptmx, err := pty.StartWithSize(p.cmd, &pty.Winsize{Rows: 40, Cols: 200})
	if err != nil {
		t.Fatal(err)
	}
	defer ptmx.Close()
	p.tty = ptmx
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := ptmx.Read(buf)
			p.mu.Lock()
			p.out.Write(buf[:n])
			p.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	go func() { p.done <- p.cmd.Wait() }()
	exited := false
	t.Cleanup(func() {
		if !exited {
			p.cmd.Process.Kill()
			<-p.done
		}
	})
	prompt := r.name + "> "
	p.expect(prompt, 10*time.Second)

	p.typeLine("h1 ping -c 1 h2")
	if out := p.expect(prompt, 10*time.Second); !strings.Contains(out, "from 10.0.0.2") || !strings.Contains(out, " 0% packet loss") {
		t.Errorf("h1 ping -c 1 h2 did not ping 10.0.0.2 without loss:\n%s", out)
	}

	p.typeLine("pingall")
	out := p.expect(prompt, 30*time.Second)
	for _, want := range []string{"h1 -> h2 h3", "h2 -> h1 h3", "h3 -> h1 h2", "pingall: 0% dropped (6/6 received)"} {
		if !strings.Contains(out, want) {
			t.Errorf("pingall: no %q in\n%s", want, out)
		}
	}

	p.typeLine("iperf h1 h3")
	out = p.expect(prompt, 30*time.Second)
	if m := regexp.MustCompile(`h3 received ([0-9.]+) Mbit/s`).FindStringSubmatch(out); m == nil {
		t.Errorf("iperf h1 h3 gave no rate:\n%s", out)
	} else if v, _ := strconv.ParseFloat(m[1], 64); v < 50 || v > 100 {
		t.Errorf("iperf h1 h3 over a 100M switch: %v Mbit/s, want 50-100:\n%s", v, out)
	}

	p.typeLine("stats")
	out = p.expect(prompt, 10*time.Second)
	// The pings and iperf went through the switch: h1's port counted them.
	if m := regexp.MustCompile(`(?m)^\s*h1:eth0\s+(\d+)\s+(\d+)`).FindStringSubmatch(out); m == nil || m[1] == "0" {
		t.Errorf("stats: no counted frames for h1:eth0:\n%s", out)
	}
	if !strings.Contains(out, "emulator: up") {
		t.Errorf("stats: no emulator line:\n%s", out)
	}

	// Ctrl-C ends a capture with no count, and the file holds what came.
	pcap := filepath.Join(t.TempDir(), "h1.pcap")
	p.typeLine("capture h1:eth0 -w " + pcap)
	p.expect("capturing until Ctrl-C", 10*time.Second)
	captureAttached(t, pcap)
	p.tty.Write([]byte{3})
	if out := p.expect(prompt, 10*time.Second); !strings.Contains(out, "records written to "+pcap) {
		t.Errorf("capture then Ctrl-C:\n%s", out)
	}
	if b, err := os.ReadFile(pcap); err != nil || len(b) < 24 {
		t.Errorf("the capture file: %d bytes, %v; want at least a pcap header", len(b), err)
	}

	// Ctrl-C stops a running command and the shell goes on.
	p.typeLine("h1 ping h2")
	p.expect("bytes from 10.0.0.2", 10*time.Second)
	p.tty.Write([]byte{3})
	p.expect(prompt, 5*time.Second)
	// A mistake is said and the shell goes on; Ctrl-C drops a typed line.
	p.typeLine("h9 ls")
	if out := p.expect(prompt, 5*time.Second); !strings.Contains(out, "not a command or a host") {
		t.Errorf("h9 ls:\n%s", out)
	}
	p.tty.Write([]byte("h1 ping h2\x03"))
	p.expect(prompt, 5*time.Second)

	p.typeLine("exit")
	select {
	case err := <-p.done:
		exited = true
		if err != nil {
			t.Errorf("atmlab shell exited with %v after exit", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("atmlab shell did not leave after exit")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	t.Logf("the terminal showed:\n%s", p.out.String())
	if strings.Count(p.out.String(), "bytes from 10.0.0.2") > 4 {
		t.Errorf("the ping that was typed and dropped with Ctrl-C ran:\n%s", p.out.String())
	}
}

func TestShellReadsAScript(t *testing.T) {
	requireRoot(t, "ping")
	r := up(t, labtest.Lab("two-hosts-switch", "NAME"))
	cmd := exec.Command(atmlab, "shell", r.name)
	cmd.Stdin = strings.NewReader("pingall\nset h1:eth0 delay=20ms\nh1 ping -c 1 h2\nh1 nosuchcommand\n")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "1 lines failed") {
		t.Errorf("a script with a failed line: %v, want exit code 1 and the count:\n%s", err, out)
	}
	// 20 ms each way: the ping's round trip took at least 40 ms.
	m := regexp.MustCompile(`time=([0-9.]+) ms`).FindStringSubmatch(string(out))
	if !strings.Contains(string(out), "pingall: 0% dropped (2/2 received)") || m == nil {
		t.Fatalf("script output:\n%s", out)
	}
	if v, _ := strconv.ParseFloat(m[1], 64); v < 40 {
		t.Errorf("after set delay=20ms, the ping took %v ms, want at least 40:\n%s", v, out)
	}
}
