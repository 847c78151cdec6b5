// Package labshell is atmlab shell's interpreter: it reads command lines
// and runs each against a running lab, with the lab's node names standing
// for their addresses, as Mininet's CLI does (`h1 ping h2`, `pingall`,
// `iperf h1 h2`), and the lab's own verbs (set, stats, capture) by the
// same calls the command line makes.
package labshell

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/atmlab/atmlab/control"
	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/settings"
)

// Lab is a running lab as the shell reaches it.
type Lab interface {
	// Command returns argv to run in host node (not started); ctx's end
	// cancels it.
	Command(ctx context.Context, node string, argv []string) *exec.Cmd
	// Set changes the link that has endpoint (atmlab set).
	Set(ctx context.Context, endpoint, direction string, c settings.Change) (*control.Changed, error)
	// Stats prints the lab's counters to w as atmlab stats does.
	Stats(ctx context.Context, w io.Writer) error
	// Capture copies the link that has endpoint to w until ctx ends or
	// count records (if count > 0) were written, and returns how many were.
	Capture(ctx context.Context, endpoint string, cells bool, w io.Writer, count int) (int, error)
}

// Shell runs command lines against one lab.
type Shell struct {
	Lab  Lab
	View topologies.View // the lab's nodes and links
	// Stdin is what a node's command reads: the terminal, or nil (nothing)
	// when the commands come from a script.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// IperfTime is how long iperf measures (5 s unless set).
	IperfTime time.Duration

	addrs map[string]string // node name → its first address
	hosts []string          // host names, in the lab file's order
}

// ErrExit is what Run returns for exit, quit or the end of the input.
var ErrExit = errors.New("exit")

// init fills the name tables from the lab's view.
func (s *Shell) init() {
	if s.addrs != nil {
		return
	}
	s.addrs = map[string]string{}
	for _, n := range s.View.Nodes {
		if n.Kind == topologies.KindHost {
			s.hosts = append(s.hosts, n.Name)
		}
		for _, i := range n.Interfaces {
			if _, addr, ok := strings.Cut(i, " "); ok {
				addr, _, _ = strings.Cut(addr, "/")
				s.addrs[n.Name] = addr
				break
			}
		}
	}
}

// Run runs one command line; ctx's end (Ctrl-C) cancels it. It returns
// ErrExit for exit and quit. An error is the line's alone: the shell goes
// on.
func (s *Shell) Run(ctx context.Context, line string) error {
	s.init()
	words, err := Split(line)
	if err != nil || len(words) == 0 {
		return err
	}
	switch cmd, args := words[0], words[1:]; cmd {
	case "exit", "quit":
		return ErrExit
	case "help", "?":
		fmt.Fprint(s.Stdout, Help)
		return nil
	case "nodes":
		s.nodes()
		return nil
	case "links":
		s.links()
		return nil
	case "pingall":
		if len(args) > 0 {
			return fmt.Errorf("pingall takes no arguments")
		}
		return s.pingall(ctx)
	case "iperf":
		return s.iperf(ctx, args)
	case "set":
		return s.set(ctx, args)
	case "stats":
		if len(args) > 0 {
			return fmt.Errorf("stats takes no arguments")
		}
		return s.Lab.Stats(ctx, s.Stdout)
	case "capture":
		return s.capture(ctx, args)
	default:
		if !s.isHost(cmd) {
			return fmt.Errorf("%s: not a command or a host of lab %s (hosts: %s; type help)", cmd, s.View.Lab, strings.Join(s.hosts, " "))
		}
		if len(args) == 0 {
			return fmt.Errorf("%s: give a command to run in it, such as %s ip addr (an interactive shell: atmlab exec %s %s)", cmd, cmd, s.View.Lab, cmd)
		}
		return s.runIn(ctx, cmd, Substitute(args, s.addrs))
	}
}

// Help lists the shell's commands.
const Help = `commands (node names stand for their addresses in a node's command):
  NODE CMD ARGS...        run CMD in host NODE, e.g. h1 ping h2 (ping gets -c 4 unless a count is given)
  pingall                 ping every host from every other host once; a matrix and the loss
  iperf A B               TCP throughput from host A to host B for a few seconds (iperf3)
  set LINK key=value ...  change a link (as atmlab set): delay=20ms, rate=10M, loss=1%, ...
      [--direction FROM]    only what FROM sends
      [--reset]             back to the lab file's settings first
  stats                   the lab's counters (as atmlab stats)
  capture LINK -w FILE [-c N] [--cells]
                          capture a link to a pcap file, N records or until Ctrl-C
  nodes, links            the lab's nodes with their addresses, and its links
  help, exit, quit        (Ctrl-C stops the running command; Ctrl-D or exit leaves)
LINK is one end of a link: h1:eth0, sw1:p2.
`

func (s *Shell) isHost(name string) bool {
	for _, h := range s.hosts {
		if h == name {
			return true
		}
	}
	return false
}

// runIn runs argv in host node with the terminal's input and output.
func (s *Shell) runIn(ctx context.Context, node string, argv []string) error {
	c := s.command(ctx, node, argv)
	c.Stdin, c.Stdout, c.Stderr = s.Stdin, s.Stdout, s.Stderr
	err := c.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) && ctx.Err() == nil {
		return fmt.Errorf("%s: %s exited with status %d", node, argv[0], exit.ExitCode())
	}
	if ctx.Err() != nil {
		return nil // stopped by Ctrl-C: what it printed is the answer
	}
	return err
}

// command is the lab's command in node, which Ctrl-C asks to stop (SIGINT,
// as a terminal does) before it is killed.
func (s *Shell) command(ctx context.Context, node string, argv []string) *exec.Cmd {
	c := s.Lab.Command(ctx, node, argv)
	c.Cancel = func() error { return c.Process.Signal(os.Interrupt) }
	c.WaitDelay = 3 * time.Second
	return c
}

func (s *Shell) nodes() {
	w := tabwriter.NewWriter(s.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "node\tkind\tinterfaces")
	for _, n := range s.View.Nodes {
		fmt.Fprintf(w, "%s\t%s\t%s\n", n.Name, n.Kind, strings.Join(n.Interfaces, ", "))
	}
	w.Flush()
}

func (s *Shell) links() {
	w := tabwriter.NewWriter(s.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "link\trate\tdelay\tloss\tatm")
	for _, l := range s.View.Links {
		atm := ""
		if l.PHY != "" {
			atm = strings.TrimSpace(l.PHY + " " + l.AAL + " " + l.Enc)
		}
		fmt.Fprintf(w, "%s -- %s\t%s\t%s\t%s\t%s\n", l.A, l.B, l.AB.Text, ms(l.AB.Delay+l.Prop), pct(l.AB.Loss), atm)
	}
	w.Flush()
}

func ms(v float64) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprintf("%gms", v)
}

func pct(p float64) string {
	if p == 0 {
		return "-"
	}
	return fmt.Sprintf("%g%%", 100*p)
}

// set parses atmlab set's words: LINK key=value ... [--direction FROM] [--reset].
func (s *Shell) set(ctx context.Context, args []string) error {
	var endpoint, direction string
	var reset bool
	var words []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--reset":
			reset = true
		case a == "--direction":
			if i+1 >= len(args) {
				return fmt.Errorf("set: --direction needs the sending end, such as --direction h1:eth0")
			}
			i++
			direction = args[i]
		case strings.HasPrefix(a, "--direction="):
			direction = strings.TrimPrefix(a, "--direction=")
		case strings.HasPrefix(a, "-"):
			return fmt.Errorf("set: unknown flag %s (use --direction FROM or --reset)", a)
		case endpoint == "":
			endpoint = a
		default:
			words = append(words, a)
		}
	}
	if endpoint == "" {
		return fmt.Errorf("set: name a link by one end, such as set h1:eth0 delay=20ms")
	}
	ch, err := settings.ParseChange(words)
	if err != nil {
		return err
	}
	if len(words) == 0 && !reset {
		return fmt.Errorf("set: nothing to change: give key=value settings, such as delay=20ms, or --reset")
	}
	ch.Reset = reset
	rec, err := s.Lab.Set(ctx, endpoint, direction, ch)
	if err != nil {
		return err
	}
	for _, d := range rec.Directions {
		fmt.Fprintln(s.Stdout, d)
	}
	return nil
}

// capture parses capture's words: LINK -w FILE [-c N] [--cells].
func (s *Shell) capture(ctx context.Context, args []string) error {
	var endpoint, file string
	var count int
	var cells bool
	for i := 0; i < len(args); i++ {
		switch a := args[i]; a {
		case "-w", "-c":
			if i+1 >= len(args) {
				return fmt.Errorf("capture: %s needs a value", a)
			}
			i++
			if a == "-w" {
				file = args[i]
			} else if _, err := fmt.Sscanf(args[i], "%d", &count); err != nil || count < 0 || fmt.Sprint(count) != args[i] {
				return fmt.Errorf("capture: -c %q: give a count of records, such as -c 100", args[i])
			}
		case "--cells":
			cells = true
		default:
			if strings.HasPrefix(a, "-") || endpoint != "" {
				return fmt.Errorf("capture: unexpected %q (capture LINK -w FILE [-c N] [--cells])", a)
			}
			endpoint = a
		}
	}
	if endpoint == "" || file == "" {
		return fmt.Errorf("capture: give a link and a file: capture LINK -w FILE [-c N] [--cells]")
	}
	f, err := os.Create(file)
	if err != nil {
		return fmt.Errorf("capture: %w", err)
	}
	if count == 0 {
		fmt.Fprintln(s.Stderr, "capturing until Ctrl-C")
	}
	n, err := s.Lab.Capture(ctx, endpoint, cells, f, count)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	fmt.Fprintf(s.Stdout, "%d records written to %s\n", n, file)
	return err
}
