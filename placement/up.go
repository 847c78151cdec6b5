package placement

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/atmlab/atmlab/campaign"
	"github.com/atmlab/atmlab/harness/results"
)

// A runner is one engine's way of running a split lab's parts.
type runner interface {
	// start launches every part; the folder is the split's results folder.
	start(ctx context.Context, out *results.Folder) error
	// log returns part k's output so far (nothing before it starts).
	log(k int) []byte
	// stopped says why the parts have stopped by themselves, "" while
	// they run.
	stopped() string
	// stop asks every part to stop, waits for them and removes what they
	// left; it keeps their logs in the folder.
	stop(out *results.Folder) error
}

// newRunner is the split's engine's runner.
func newRunner(s Split, w io.Writer) (runner, error) {
	switch s.Engine {
	case campaign.Local:
		return newLocal(s, w)
	case campaign.Slurm:
		return &slurmRunner{s: s, w: w}, nil
	case campaign.Kubernetes:
		return &kubeRunner{s: s, w: w}, nil
	}
	return nil, fmt.Errorf("no engine %v", s.Engine)
}

// How often Up looks at its parts, and how long it waits for them all to
// say they are ready (a Slurm job may wait in the queue, pods for their
// image).
var (
	poll      = 200 * time.Millisecond
	readyWait = 10 * time.Minute
)

// Report is split.json, the split lab's own record in its results folder.
type Report struct {
	Lab     string       `json:"lab"`
	Engine  string       `json:"engine"`
	Started time.Time    `json:"started"`
	Ready   *time.Time   `json:"ready,omitempty"` // every part ready
	Ended   time.Time    `json:"ended"`
	Why     string       `json:"why"` // what ended it
	Parts   []PartReport `json:"parts"`
	Error   string       `json:"error,omitempty"`
}

// PartReport is one part in split.json.
type PartReport struct {
	Name   string   `json:"name"`
	Listen string   `json:"listen"`
	Peers  []string `json:"peers"`
	Ready  bool     `json:"ready"`
	Log    string   `json:"log"`  // in the folder
	Last   string   `json:"last"` // the log's last line
	// Cuts are the part's cut links as its last stats showed them
	// (control.Stats' cuts: what crossed, how late, the clock exchanges),
	// kept in full in part-NAME.stats.json.
	Cuts json.RawMessage `json:"cuts,omitempty"`
}

// ReportFile is split.json's name.
const ReportFile = "split.json"

// Up brings every part of the split lab up on its engine and says so on w
// with a line holding "ready" once each part has said it is ready. It
// stays until ctx ends (SIGINT, SIGTERM) or a part stops, then brings every
// part down, and writes the results folder: the parts' logs and last
// stats, the engine's files, and split.json, which holds every part's
// cuts from its stats. The error says which part stopped or failed.
func Up(ctx context.Context, s Split, w io.Writer) error {
	if err := s.Check(); err != nil {
		return err
	}
	r, err := newRunner(s, w)
	if err != nil {
		return err
	}
	return up(ctx, s, r, w)
}

// up is Up with the engine's runner.
func up(ctx context.Context, s Split, r runner, w io.Writer) (err error) {
	out, err := results.Create(s.Out, results.Fresh)
	if err != nil {
		return err
	}
	defer out.Close()
	rep := Report{Lab: s.Lab, Engine: s.Engine.String(), Started: time.Now().UTC()}
	for k, name := range s.Parts {
		args := s.PartArgs(s.File, k, func(j int) string { return "(" + s.Parts[j] + ")" })
		rep.Parts = append(rep.Parts, PartReport{Name: name, Listen: s.Listen(k), Peers: strings.Split(args[len(args)-1], ","), Log: s.LogName(k)})
	}
	defer func() {
		rep.Ended = time.Now().UTC()
		if err != nil {
			rep.Error = err.Error()
		}
		for k := range rep.Parts {
			rep.Parts[k].Last = lastLine(r.log(k))
			rep.Parts[k].Cuts = cuts(out, s.StatsName(k))
		}
		b, _ := json.MarshalIndent(rep, "", "  ")
		if werr := out.WriteFile(ReportFile, append(b, '\n'), 0o644); werr != nil && err == nil {
			err = werr
		}
		fmt.Fprintf(w, "split lab %s: down (%s); results in %s\n", s.Lab, rep.Why, s.Out)
	}()
	fmt.Fprintf(w, "split lab %s: %d parts on %s, results in %s\n", s.Lab, len(s.Parts), s.Engine, s.Out)
	startErr := r.start(ctx, out)
	if startErr == nil {
		startErr = waitReady(ctx, s, r, &rep, w)
	}
	if n, ok := r.(interface{ ready() }); ok && startErr == nil {
		n.ready()
	}
	if startErr == nil {
		rep.Why = wait(ctx, r)
	} else {
		rep.Why = startErr.Error()
	}
	stopErr := r.stop(out)
	if startErr != nil {
		return errors.Join(startErr, stopErr)
	}
	if ctx.Err() == nil { // a part stopped by itself
		return errors.Join(errors.New(rep.Why), stopErr)
	}
	return stopErr
}

// waitReady waits for every part's log to hold a line with "ready".
func waitReady(ctx context.Context, s Split, r runner, rep *Report, w io.Writer) error {
	deadline := time.Now().Add(readyWait)
	for {
		all := true
		for k := range s.Parts {
			if rep.Parts[k].Ready {
				continue
			}
			if ready(r.log(k)) {
				rep.Parts[k].Ready = true
				fmt.Fprintf(w, "part %s: ready\n", s.Parts[k])
			} else {
				all = false
			}
		}
		if all {
			now := time.Now().UTC()
			rep.Ready = &now
			fmt.Fprintf(w, "split lab %s: ready (%d parts); SIGINT or atmlab down %s --on %s brings it down\n", s.Lab, len(s.Parts), s.File, s.Engine)
			return nil
		}
		if why := r.stopped(); why != "" {
			return fmt.Errorf("before every part was ready: %s", why)
		}
		if time.Now().After(deadline) {
			var late []string
			for k, p := range rep.Parts {
				if !p.Ready {
					late = append(late, fmt.Sprintf("%s (%s)", p.Name, lastLine(r.log(k))))
				}
			}
			return fmt.Errorf("waited %v for parts %s to be ready", readyWait, strings.Join(late, ", "))
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("interrupted before every part was ready")
		case <-time.After(poll):
		}
	}
}

// wait waits for ctx to end or a part to stop, and says which.
func wait(ctx context.Context, r runner) string {
	for {
		if why := r.stopped(); why != "" {
			return why
		}
		select {
		case <-ctx.Done():
			return "interrupted"
		case <-time.After(poll):
		}
	}
}

// ready reports whether a part's output has said it is ready: a line
// "lab NAME ... ready...", as atmlab up prints.
func ready(log []byte) bool {
	for _, line := range bytes.Split(log, []byte("\n")) {
		if bytes.HasPrefix(line, []byte("lab ")) && bytes.Contains(line, []byte(" ready")) {
			return true
		}
	}
	return false
}

// lastLine is the last line a part wrote.
func lastLine(log []byte) string {
	lines := strings.Split(strings.TrimSpace(string(log)), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// cuts is the cuts of a part's stats file in the folder, nil if it has
// none (a part that stopped by itself says nothing).
func cuts(out *results.Folder, name string) json.RawMessage {
	b, err := out.ReadFile(name, 0)
	if err != nil {
		return nil
	}
	var st struct {
		Cuts json.RawMessage `json:"cuts"`
	}
	if json.Unmarshal(b, &st) != nil || len(st.Cuts) == 0 || string(st.Cuts) == "null" {
		return nil
	}
	return st.Cuts
}
