package labrun

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/atmlab/atmlab/harness/perf"
	"github.com/atmlab/atmlab/harness/vperf"
	"github.com/atmlab/atmlab/netstat"
	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/labyaml"
	"github.com/atmlab/atmlab/topologies/study"
)

// A Tool is an experiment's test tool, its whole self in one file: its
// name, its real side (its program run in a real-time lab's hosts) and
// its virtual side (the test between virtual hosts that stands for it,
// or why none does). An Env's Measure picks the side of its runtime; the
// runner never does. A tool joins the others by its method of toolbox.
type Tool interface {
	// Name is what an experiment's tool: says to pick it.
	Name() string
	// Real measures a point with the tool's program in a real-time lab's
	// hosts.
	Real(ctx context.Context, h *HostsEnv, p Point, e *study.Experiment) (perf.Result, error)
	// Virtual is the test between virtual hosts, in model time, that
	// measures the tool's points, or why it has none.
	Virtual(e *study.Experiment) (func(vperf.Test) (perf.Result, error), error)
}

// A udpSized tool sends only some of the UDP message sizes a lab file
// allows (1 to study.MaxUDPMessage): it says which, and why.
type udpSized interface {
	UDPSizes() (lo, hi int, why string)
}

// toolbox's methods are the experiments' tools, each in its tool's file
// (atmlab.go, iperf3.go, iperf2.go) and returning it: Tools reads them, so
// a new tool is one new file, with nothing to add to a list and nothing
// registered at init.
type toolbox struct{}

// Tools are the experiments' tools, in their methods' order.
var Tools = toolsOf(toolbox{})

// toolsOf is the tools a toolbox's methods return; a method of another
// shape is a mistake in this package, and it panics to say so.
func toolsOf(box any) []Tool {
	v := reflect.ValueOf(box)
	var ts []Tool
	for i := range v.NumMethod() {
		m := v.Method(i)
		t, ok := m.Interface().(func() Tool)
		if !ok {
			panic(fmt.Sprintf("labrun: %s.%s is not a func() Tool", v.Type().Name(), v.Type().Method(i).Name))
		}
		ts = append(ts, t())
	}
	return ts
}

// ToolNames are the tools' names, what an experiment's tool: may say.
func ToolNames() []string {
	names := make([]string, len(Tools))
	for i, t := range Tools {
		names[i] = t.Name()
	}
	return names
}

// ToolOf is the tool that measures an experiment's points: the tool of
// the name, atmlab perf for any other.
func ToolOf(name string) Tool {
	for _, t := range Tools {
		if t.Name() == name {
			return t
		}
	}
	return atmlabTool{}
}

// realOnly is the virtual side of a tool that runs only in real time (a
// real binary on a real host): atmlab perf's test when the experiment
// says virtual: atmlab, else the reason it is skipped.
func realOnly(tool string, e *study.Experiment) (func(vperf.Test) (perf.Result, error), error) {
	if e.Virtual == study.DefaultTool {
		return vperf.Run, nil
	}
	return nil, fmt.Errorf("skipped: %s runs only in real time (a real binary on a real host); run with --clock real", tool)
}

// CheckTools checks the tools a lab file's study names (the lab file knows
// only its default, atmlab perf): each tool: must be one of Tools, each
// size a UDP test sends one its tool sends (udpSized), and an
// experiment's virtual: is for a tool with no virtual side of its own.
// Problems come back as the lab file's do, each an *labyaml.Error, joined
// in line order.
func CheckTools(lab *topologies.Lab) error {
	var errs []error
	for _, u := range lab.ToolUses {
		if !slices.Contains(ToolNames(), u.Name) {
			errs = append(errs, &labyaml.Error{File: lab.File, Line: u.Line, Key: u.Key, Msg: fmt.Sprintf("%q: use %s", u.Name, strings.Join(ToolNames(), ", "))})
		}
	}
	for _, u := range lab.UDPSizeUses {
		if t, ok := ToolOf(u.Tool).(udpSized); ok {
			if lo, hi, why := t.UDPSizes(); u.Size < lo || u.Size > hi {
				fix := ""
				if u.Size > hi {
					fix = study.LargerForTCP
				}
				errs = append(errs, &labyaml.Error{File: lab.File, Line: u.Line, Key: u.Key, Msg: fmt.Sprintf("%d bytes with %s: %s%s", u.Size, u.Tests, why, fix)})
			}
		}
	}
	for i, e := range lab.Experiments {
		if e.Virtual == "" {
			continue
		}
		if _, skip := ToolOf(e.Tool).Virtual(&study.Experiment{}); skip == nil {
			errs = append(errs, &labyaml.Error{File: lab.File, Line: e.Line, Key: fmt.Sprintf("experiments[%d].virtual", i),
				Msg: fmt.Sprintf("only an experiment whose tool has no virtual side of its own (%s) can run as atmlab's test in virtual time; remove virtual:", strings.Join(realOnlyTools(), ", "))})
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return labyaml.JoinByLine(errs)
}

// realOnlyTools are the tools with no virtual side of their own.
func realOnlyTools() []string {
	var names []string
	for _, t := range Tools {
		if _, skip := t.Virtual(&study.Experiment{}); skip != nil {
			names = append(names, t.Name())
		}
	}
	return names
}

// Ports the lab run's servers listen on.
const (
	perfPort   = perf.DefaultPort // atmlab perf servers, up for the whole run
	iperf3Port = 5201
	iperf2Port = 5001
)

// Readiness deadlines: how long a server may take to listen, and a
// client to find it listening, before the point fails.
const (
	serveTimeout = 5 * time.Second
	retryEvery   = 20 * time.Millisecond
)

// toolResult is the start of an external tool's result for a point.
func toolResult(lab *topologies.Lab, p Point, e *study.Experiment) perf.Result {
	return perf.Result{Schema: perf.SchemaVersion, Test: p.Test, Host: target(lab, p.From, p.To), Spec: perf.Spec{Test: p.Test, Duration: e.Duration, Message: p.Size}}
}

// untilServed runs a tool's client in a host, again every retryEvery until
// served says its server was listening or serveTimeout has passed: a
// server that has just started is ready when a client is served, not
// after a fixed wait. It returns the last run's output and the CPU its
// client used (user and system, as a fraction of one core over its run
// time): the same measure for every tool, since atmlab exec becomes the
// tool itself.
func (h *HostsEnv) untilServed(ctx context.Context, node string, args []string, served func(out []byte, err error) bool) (out []byte, cpu float64, err error) {
	deadline := time.Now().Add(serveTimeout)
	for {
		cmd := h.Hosts.Command(node, args...)
		t0 := time.Now()
		out, err = cmd.Output()
		if st := cmd.ProcessState; st != nil {
			cpu = float64(st.UserTime()+st.SystemTime()) / float64(time.Since(t0))
		}
		if served(out, err) || time.Now().After(deadline) || ctx.Err() != nil {
			return out, cpu, err
		}
		time.Sleep(retryEvery)
	}
}

// server is a server process the run started in a host: what it says,
// watched for the line that tells it is ready, and its exit.
type server struct {
	what   string
	node   string
	cmd    *exec.Cmd
	said   *lineWatch
	exited chan error // its Wait's result, once it exits
	end    time.Time  // when it exited, once exited has said so
	done   chan struct{}
	sched  schedSpan
}

// schedSpan is a server's scheduler figures (netstat.Sched), read every
// schedEvery while it runs: the first reading and the last.
type schedSpan struct {
	mu          sync.Mutex
	first, last schedReading
}

type schedReading struct {
	at        time.Time
	run, wait time.Duration
}

const schedEvery = 100 * time.Millisecond

// watchSched reads the server's scheduler figures until it exits.
func (s *server) watchSched() {
	t := time.NewTicker(schedEvery)
	defer t.Stop()
	for {
		if run, wait, err := netstat.Sched(s.cmd.Process.Pid); err == nil {
			r := schedReading{time.Now(), run, wait}
			s.sched.mu.Lock()
			if s.sched.first.at.IsZero() {
				s.sched.first = r
			}
			s.sched.last = r
			s.sched.mu.Unlock()
		}
		select {
		case <-s.done:
			return
		case <-t.C:
		}
	}
}

// cpu is the share of a core the server's threads ran and the share of
// the time they waited runnable for a CPU, between its first and last
// readings; zeros before two readings a schedEvery apart.
func (s *server) cpu() (run, waited float64) {
	s.sched.mu.Lock()
	defer s.sched.mu.Unlock()
	f, l := s.sched.first, s.sched.last
	span := l.at.Sub(f.at)
	if span < schedEvery {
		return 0, 0
	}
	return float64(l.run-f.run) / float64(span), float64(l.wait-f.wait) / float64(span)
}

// startServer starts a server in a host; ready is the line (on stdout or
// stderr) that says it listens or has reported, nil if it says nothing.
func (h *HostsEnv) startServer(what, node string, ready func(line string) bool, args ...string) (*server, error) {
	s := &server{what: what, node: node, cmd: h.Hosts.Command(node, args...), said: newLineWatch(ready), exited: make(chan error, 1), done: make(chan struct{})}
	s.cmd.Stdout, s.cmd.Stderr = s.said, s.said
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s in %s: %w", what, node, err)
	}
	go s.watchSched()
	go func() { err := s.cmd.Wait(); s.end = time.Now(); close(s.done); s.exited <- err }()
	return s, nil
}

// await waits up to d for the server's ready line; a server that exits
// first, or says nothing in time, is an error that quotes what it said.
func (s *server) await(d time.Duration) error {
	select {
	case <-s.said.seen:
		return nil
	case err := <-s.exited:
		s.exited <- err // for stop
		return fmt.Errorf("%s in %s exited before it was ready (%v): %s", s.what, s.node, err, cmp.Or(s.said.String(), "it said nothing"))
	case <-time.After(d):
		return fmt.Errorf("%s in %s was not ready within %v: %s", s.what, s.node, d, cmp.Or(s.said.String(), "it said nothing"))
	}
}

// endedBefore says why the server exited before t, "" if it did not.
func (s *server) endedBefore(t time.Time) string {
	select {
	case err := <-s.exited:
		s.exited <- err // for stop
		if s.end.Before(t) {
			status := "exit status 0"
			if err != nil {
				status = err.Error()
			}
			return fmt.Sprintf("%s in %s ended (%s): %s", s.what, s.node, status, cmp.Or(s.said.String(), "it said nothing"))
		}
	default:
	}
	return ""
}

// stop kills the server and waits for it: a server killed so exits with
// the kill's status, which says nothing of the point.
func (s *server) stop() {
	if err := s.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return // not ours to wait for
	}
	<-s.exited
}

// lineWatch keeps what a server writes and closes seen at the first complete
// line that match accepts.
type lineWatch struct {
	mu    sync.Mutex
	text  strings.Builder
	line  []byte // the line being written
	match func(string) bool
	seen  chan struct{}
}

func newLineWatch(match func(string) bool) *lineWatch {
	return &lineWatch{match: match, seen: make(chan struct{})}
}

func (w *lineWatch) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.text.Write(b)
	for _, c := range b {
		if c != '\n' {
			w.line = append(w.line, c)
			continue
		}
		if w.match != nil && w.match(string(w.line)) {
			close(w.seen)
			w.match = nil
		}
		w.line = w.line[:0]
	}
	return len(b), nil
}

// String is all the server has written so far.
func (w *lineWatch) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.TrimSpace(w.text.String())
}

func stderrOf(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return strings.TrimSpace(string(ee.Stderr))
	}
	return ""
}
