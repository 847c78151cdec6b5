package labrun

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/atmlab/atmlab/harness/perf"
	"github.com/atmlab/atmlab/harness/vperf"
	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/study"
)

// A Tool measures a point with test programs it runs in the lab's hosts
// through the runner's Env: atmlab perf (atmlab.go), iperf3 (iperf3.go)
// and iperf 2 (iperf2.go), as an experiment's tool: names them.
type Tool interface {
	// Measure is the tool's real side: its program run in a real-time
	// lab's hosts (r.Env is Hosts).
	Measure(ctx context.Context, r *Runner, p Point, e *study.Experiment) (perf.Result, error)
	// Virtual is the tool's virtual side: the test between virtual hosts,
	// in model time, that measures its points, or why it has none.
	Virtual(e *study.Experiment) (func(vperf.Test) (perf.Result, error), error)
}

// Virtual: atmlab perf's tests run between virtual hosts as they are.
func (atmlabTool) Virtual(*study.Experiment) (func(vperf.Test) (perf.Result, error), error) {
	return vperf.Run, nil
}

// Virtual: iperf3 is a real binary on a real host; an experiment that
// says virtual: atmlab has atmlab perf's test of the same name stand in.
func (iperf3Tool) Virtual(e *study.Experiment) (func(vperf.Test) (perf.Result, error), error) {
	return realOnly(study.ToolIperf3, e)
}

// Virtual: as iperf3's.
func (iperf2Tool) Virtual(e *study.Experiment) (func(vperf.Test) (perf.Result, error), error) {
	return realOnly(study.ToolIperf, e)
}

// realOnly is a real-time tool's virtual side: atmlab perf's test when
// the experiment says virtual: atmlab, else the reason it is skipped.
func realOnly(tool string, e *study.Experiment) (func(vperf.Test) (perf.Result, error), error) {
	if e.Virtual == study.ToolAtmlab {
		return vperf.Run, nil
	}
	return nil, fmt.Errorf("skipped: %s runs only in real time (a real binary on a real host); run with --clock real", tool)
}

// tools are the experiments' tools by name; an experiment without one
// runs atmlab perf.
var tools = map[string]Tool{study.ToolAtmlab: atmlabTool{}, study.ToolIperf3: iperf3Tool{}, study.ToolIperf: iperf2Tool{}}

// ToolOf is the tool that measures an experiment's points.
func ToolOf(name string) Tool {
	if t, ok := tools[name]; ok {
		return t
	}
	return atmlabTool{}
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
func (r *Runner) untilServed(ctx context.Context, node string, args []string, served func(out []byte, err error) bool) (out []byte, cpu float64, err error) {
	deadline := time.Now().Add(serveTimeout)
	for {
		cmd := r.command(node, args...)
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
}

// startServer starts a server in a host; ready is the line (on stdout or
// stderr) that says it listens or has reported, nil if it says nothing.
func (r *Runner) startServer(what, node string, ready func(line string) bool, args ...string) (*server, error) {
	s := &server{what: what, node: node, cmd: r.command(node, args...), said: newLineWatch(ready), exited: make(chan error, 1)}
	s.cmd.Stdout, s.cmd.Stderr = s.said, s.said
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s in %s: %w", what, node, err)
	}
	go func() { err := s.cmd.Wait(); s.end = time.Now(); s.exited <- err }()
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

// command is a command that runs inside one of a real-time lab's hosts.
func (r *Runner) command(node string, args ...string) *exec.Cmd {
	return r.Env.(Hosts).Command(node, args...)
}
