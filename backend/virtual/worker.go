package virtual

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"sync"

	"github.com/atmlab/atmlab/harness/labrun"
	"github.com/atmlab/atmlab/harness/perf"
	"github.com/atmlab/atmlab/topologies"
	"github.com/atmlab/atmlab/topologies/study"
)

// WorkerEnv, set to 1 in its environment, makes an `atmlab lab run` a
// point worker (Work) instead of a run: the lab file planned as the run
// planned it, its points measured as they come on stdin.
const WorkerEnv = "ATMLAB_VIRTUAL_WORKER"

// InWorker says whether this process is a point worker.
func InWorker() bool { return os.Getenv(WorkerEnv) == "1" }

// request is a point a run hands a worker: its variant's name, the
// digest of that variant's lab as the run planned it, and the point.
type request struct {
	Variant string
	Lab     [sha256.Size]byte
	Point   labrun.Point
}

// digest is a variant's lab as the spec.json of its run holds it. A
// worker plans the lab file again: if the file changed since the run
// began, its lab's digest differs and it measures nothing.
func digest(variant string, lab *topologies.Lab) ([sha256.Size]byte, error) {
	b, err := topologies.SpecJSON([]string{variant}, []*topologies.Lab{lab})
	return sha256.Sum256(b), err
}

// reply is what Env.Measure records of a point, as a worker measured it;
// Fail is the worker's own failure (no such variant).
type reply struct {
	Stack      string
	Result     perf.Result
	Background *labrun.BackgroundLoad
	Error      string
	MeasuredBy string
	Fail       string
}

// Work serves a run's points on in, one JSON request a line, and writes
// each one's reply to out, until in ends: each measured as Env.Measure
// measures it, on variants (Plan's for the same file and --quick as the
// run's). It takes one processor (a point runs one goroutine at a time)
// and the run's garbage collection, unless the environment sets them.
func Work(ctx context.Context, variants []labrun.Variant, in io.Reader, out io.Writer) error {
	if os.Getenv("GOMAXPROCS") == "" {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	}
	if os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(GCPercent))
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(MemoryLimit))
	}
	dec := json.NewDecoder(bufio.NewReader(in))
	w := bufio.NewWriter(out)
	enc := json.NewEncoder(w)
	for {
		var q request
		if err := dec.Decode(&q); err == io.EOF {
			return nil
		} else if err != nil {
			return fmt.Errorf("point worker: %w", err)
		}
		if err := enc.Encode(measureFor(ctx, variants, q)); err != nil {
			return err
		}
		if err := w.Flush(); err != nil {
			return err
		}
	}
}

// measureFor measures a request's point on its variant's lab, if that
// is the lab the run planned.
func measureFor(ctx context.Context, variants []labrun.Variant, q request) reply {
	for _, v := range variants {
		if v.Name != q.Variant {
			continue
		}
		if d, err := digest(v.Name, v.Lab); err != nil || d != q.Lab {
			return reply{Fail: fmt.Sprintf("the point worker planned variant %q of %s differently from the run: did the lab file change since the run began? Run it again", v.Name, v.Lab.File)}
		}
		var ex *study.Experiment
		for _, e := range v.Lab.Experiments {
			if e.Name == q.Point.Experiment {
				ex = e
			}
		}
		if ex == nil {
			break
		}
		var rec labrun.Record
		Env{lab: v.Lab}.measureHere(ctx, q.Point, ex, &rec)
		return reply{Stack: rec.Stack, Result: rec.Result, Background: rec.Background, Error: rec.Error, MeasuredBy: rec.MeasuredBy}
	}
	return reply{Fail: fmt.Sprintf("the point worker has no experiment %q in variant %q", q.Point.Experiment, q.Variant)}
}

// Workers are the point workers of one run: processes of this atmlab at
// one processor each, started as points need them, up to the run's jobs.
// Two points side by side in one process at GOMAXPROCS 2 hand goroutines
// between its threads and use more CPU than two processes at one each.
type Workers struct {
	start func() (*worker, error) // a new worker
	free  chan *worker            // idle workers
	mu    sync.Mutex
	all   []*worker
	n     int // the most at once
}

// worker is one worker process and its pipes.
type worker struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	enc *json.Encoder
	dec *json.Decoder
}

// NewWorkers starts the workers of a run of file (planned with quick)
// in virtual time, n of them, each `self lab run FILE --clock virtual
// [--quick]` with WorkerEnv set, its errors to stderr: started now, they
// plan the lab while the run opens its results (one that fails to start
// is tried again when a point needs it).
func NewWorkers(self, file string, quick bool, n int, stderr io.Writer) *Workers {
	args := []string{"lab", "run", file, "--clock", "virtual"}
	if quick {
		args = append(args, "--quick")
	}
	ws := newWorkers(n, func() (*worker, error) {
		cmd := exec.Command(self, args...)
		cmd.Env = append(os.Environ(), WorkerEnv+"=1")
		cmd.Stderr = stderr
		in, err := cmd.StdinPipe()
		if err != nil {
			return nil, err
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			return nil, err
		}
		if err := cmd.Start(); err != nil {
			return nil, err
		}
		return &worker{cmd: cmd, in: in, enc: json.NewEncoder(in), dec: json.NewDecoder(bufio.NewReader(out))}, nil
	})
	for range n {
		if w, err := ws.start(); err == nil {
			ws.all = append(ws.all, w)
			ws.free <- w
		}
	}
	return ws
}

func newWorkers(n int, start func() (*worker, error)) *Workers {
	return &Workers{start: start, free: make(chan *worker, n), n: n}
}

// take returns an idle worker, or a new one while fewer than n run.
func (ws *Workers) take(ctx context.Context) (*worker, error) {
	select {
	case w := <-ws.free:
		return w, nil
	default:
	}
	ws.mu.Lock()
	if len(ws.all) < ws.n {
		w, err := ws.start()
		if err == nil {
			ws.all = append(ws.all, w)
		}
		ws.mu.Unlock()
		return w, err
	}
	ws.mu.Unlock()
	select {
	case w := <-ws.free:
		return w, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// measure measures a point of a variant on a worker into rec, as
// Env.Measure would here on lab.
func (ws *Workers) measure(ctx context.Context, variant string, lab *topologies.Lab, p labrun.Point, rec *labrun.Record) error {
	d, err := digest(variant, lab)
	if err != nil {
		return err
	}
	w, err := ws.take(ctx)
	if err != nil {
		return err
	}
	var r reply
	if err := w.enc.Encode(request{variant, d, p}); err != nil {
		ws.drop(w)
		return fmt.Errorf("point worker: %w", err)
	}
	if err := w.dec.Decode(&r); err != nil {
		ws.drop(w)
		return fmt.Errorf("point worker: %w", err)
	}
	ws.free <- w
	if r.Fail != "" {
		return errors.New(r.Fail)
	}
	rec.Stack, rec.Result, rec.Background, rec.Error, rec.MeasuredBy = r.Stack, r.Result, r.Background, r.Error, r.MeasuredBy
	return nil
}

// drop ends a worker that failed, making room for a new one.
func (ws *Workers) drop(w *worker) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	for i, x := range ws.all {
		if x == w {
			ws.all = append(ws.all[:i], ws.all[i+1:]...)
		}
	}
	w.in.Close()
	if w.cmd != nil {
		w.cmd.Process.Kill()
		w.cmd.Wait()
	}
}

// Close ends the workers: their input closed, each exits.
func (ws *Workers) Close() error {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	var errs []error
	for _, w := range ws.all {
		w.in.Close()
		if w.cmd != nil {
			if err := w.cmd.Wait(); err != nil {
				errs = append(errs, fmt.Errorf("point worker: %w", err))
			}
		}
	}
	ws.all = nil
	return errors.Join(errs...)
}
